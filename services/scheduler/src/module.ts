import type { Worker } from 'bullmq';
import IORedis from 'ioredis';
import type {
  CompleteReportsSchedule,
  ReportsScheduleResult,
  ReportsSchedulesResult,
  ReportsUnscheduleResult,
} from '@quarry/contract';
import { DATA_DIR_KEYS, loadDataDirKey } from '@quarry/config';
import type { Logger } from '@quarry/logger';
import { closeBullmq, closeBullmqWorker, lostAfterReady } from '@quarry/runtime';
import { BullMqDeliveryQueue, startDeliveryWorker } from './adapters/bullmq-delivery-queue.adapter';
import { HttpWebhookSender } from './adapters/http-webhook-sender.adapter';
import { NodemailerMailer } from './adapters/nodemailer-mailer.adapter';
import { RedisScheduleStore } from './adapters/redis-schedule-store.adapter';
import type { SchedulerConfig } from './config';
import { DeliverReportUseCase } from './domain/deliver-report.use-case';
import { SchedulesUseCases } from './domain/schedules.use-cases';
import type { ReportRunner, ScheduleOwner } from './ports/report-runner.port';

/**
 * The deployment's webhook key: configured, or made once and kept in a writable data directory (one
 * process, or replicas sharing a writable volume). A read-only data directory without QUARRY_WEBHOOK_KEY
 * leaves webhooks off rather than stop the gateway: a key made per replica would sign with a secret
 * the other replicas do not know.
 */
function loadWebhookKey(configured: string | undefined, dataDir: string, log: Logger): Buffer | undefined {
  const loaded = loadDataDirKey({ ...DATA_DIR_KEYS.webhook, configured, dataDir });
  if (loaded.key === undefined) {
    log.warn(
      { err: loaded.reason, dataDir },
      'webhook schedules are off: QUARRY_WEBHOOK_KEY is not set and the data directory cannot keep a key',
    );
  }
  return loaded.key;
}

/** What the gateway calls for REPORTS.SCHEDULE, REPORTS.SCHEDULES and REPORTS.UNSCHEDULE. */
export interface ScheduleService {
  schedule(owner: ScheduleOwner, params: CompleteReportsSchedule): Promise<ReportsScheduleResult>;
  list(owner: ScheduleOwner, guid: string | undefined): Promise<ReportsSchedulesResult>;
  unschedule(owner: ScheduleOwner, scheduleId: string): Promise<ReportsUnscheduleResult>;
}

const DELIVERY_CLOSE_WAIT_MS = 10_000;
const QUEUE_CLOSE_WAIT_MS = 3000;

/**
 * Schedules and their delivery worker, on the deployment's Redis. Runs beside the gateway: deliveries run
 * reports through the gateway's own use case, as their owner.
 */
export class SchedulerModule implements ScheduleService {
  readonly name = 'scheduler';
  private redis: IORedis | undefined;
  private redisLost: () => boolean = () => false;
  private queue: BullMqDeliveryQueue | undefined;
  private worker: Worker | undefined;
  private mailer: NodemailerMailer | undefined;
  private schedules: SchedulesUseCases | undefined;
  private readonly log: Logger;

  constructor(
    private readonly config: SchedulerConfig,
    private readonly runner: ReportRunner,
    log: Logger,
  ) {
    this.log = log.child({ module: 'scheduler' });
  }

  async start(): Promise<void> {
    const c = this.config;
    const key = loadWebhookKey(c.webhookKey, c.dataDir, this.log);
    const redis = new IORedis(c.redisUrl, { maxRetriesPerRequest: 2 });
    redis.on('error', (err) => this.log.warn({ err: err.message }, 'scheduler: Redis error'));
    this.redis = redis;
    this.redisLost = lostAfterReady(redis);
    const store = new RedisScheduleStore(redis);
    const queue = new BullMqDeliveryQueue(redis, c.backoffMs);
    this.queue = queue;
    const webhooks = new HttpWebhookSender(c.webhookAllow);
    const mailer = new NodemailerMailer(c.smtpUrl, c.smtpFrom);
    this.mailer = mailer;
    this.schedules = new SchedulesUseCases({
      store,
      queue,
      runner: this.runner,
      webhooks,
      mailer,
      rules: { minIntervalSeconds: c.minIntervalSeconds, perUser: c.perUser, daily: c.daily, webhookKey: key },
    });
    const deliver = new DeliverReportUseCase({
      store,
      queue,
      runner: this.runner,
      webhooks,
      mailer,
      webhookKey: key,
      daily: c.daily,
      log: this.log,
    });
    this.worker = startDeliveryWorker(c.redisUrl, (job) => deliver.deliver(job), this.log, c.concurrency);
    // Not awaited: BullMQ waits for Redis for ever, and a gateway that never listens is restarted in a loop
    // while Redis is away. The worker connects when Redis answers; until then /readyz says so.
    this.worker.waitUntilReady().then(
      () => this.log.info('scheduler connected to Redis'),
      (err: unknown) => this.log.warn({ err: (err as Error).message }, 'scheduler: Redis connection failed'),
    );
    this.log.info(
      { webhookAllow: c.webhookAllow, email: mailer.configured, webhooks: key !== undefined },
      'scheduler started',
    );
  }

  /** Rejects, naming the store, while the schedules' Redis does not answer. */
  async ready(): Promise<void> {
    const redis = this.redis;
    if (!redis) throw new Error('the scheduler is not started');
    if (redis.status !== 'ready') throw new Error(`Redis (schedules) is unreachable: connection ${redis.status}`);
    await redis.ping();
  }

  private use(): SchedulesUseCases {
    if (!this.schedules) throw new Error('the scheduler is not started');
    return this.schedules;
  }

  schedule(owner: ScheduleOwner, params: CompleteReportsSchedule): Promise<ReportsScheduleResult> {
    return this.use().schedule(owner, params);
  }

  list(owner: ScheduleOwner, guid: string | undefined): Promise<ReportsSchedulesResult> {
    return this.use().list(owner, guid);
  }

  unschedule(owner: ScheduleOwner, scheduleId: string): Promise<ReportsUnscheduleResult> {
    return this.use().unschedule(owner, scheduleId);
  }

  async stop(): Promise<void> {
    // A delivery under way finishes within the wait (or is taken up again by the next worker after its lock
    // expires); every close is bounded, for Redis may be gone already.
    // With Redis gone no delivery can finish (nor be marked done): the worker closes by force at once.
    const redisGone = this.redisLost();
    await closeBullmqWorker(this.worker, {
      lost: redisGone,
      graceMs: DELIVERY_CLOSE_WAIT_MS,
      goneMs: QUEUE_CLOSE_WAIT_MS,
    });
    await closeBullmq(this.queue, this.queue?.close(), QUEUE_CLOSE_WAIT_MS);
    this.mailer?.close();
    this.redis?.disconnect();
  }
}

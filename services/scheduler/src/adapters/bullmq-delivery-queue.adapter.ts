import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type IORedis from 'ioredis';
import type { Logger } from '@quarry/logger';
import type { DeliveryJob, DeliveryQueue } from '../ports/delivery-queue.port';
import type { DeliveryResult } from '../domain/deliver-report.use-case';

export const DELIVERY_QUEUE = 'quarry-deliveries';
/** Tries of one run: the first and four retries, with exponential backoff between them. */
export const DELIVERY_ATTEMPTS = 5;
/**
 * A worker that dies mid-delivery loses its lock after this long and the run is tried again (at least
 * once); BullMQ renews the lock every half of it while a delivery runs.
 */
const LOCK_DURATION_MS = 10_000;
const STALLED_INTERVAL_MS = 5_000;
/** How soon a job set aside for its owner's turn is taken up again. */
const OWNER_TURN_MS = 500;

interface DeliveryData {
  scheduleId: string;
  /** Set for runNow jobs; a timer's job takes its time from the scheduler (opts.prevMillis). */
  runAt?: number;
}

/** BullMQ job schedulers, one per schedule, on the deployment's Redis. */
export class BullMqDeliveryQueue implements DeliveryQueue {
  private readonly queue: Queue<DeliveryData>;

  constructor(
    connection: IORedis,
    private readonly backoffMs: number,
  ) {
    this.queue = new Queue<DeliveryData>(DELIVERY_QUEUE, { connection });
    this.queue.on('error', () => undefined);
  }

  private get jobOpts() {
    return {
      attempts: DELIVERY_ATTEMPTS,
      backoff: { type: 'exponential' as const, delay: this.backoffMs },
      removeOnComplete: { count: 1000, age: 7 * 24 * 3600 },
      removeOnFail: { count: 1000, age: 7 * 24 * 3600 },
    };
  }

  async upsert(scheduleId: string, cron: string, timeZone: string): Promise<void> {
    await this.queue.upsertJobScheduler(
      scheduleId,
      { pattern: cron, tz: timeZone },
      { name: 'deliver', data: { scheduleId }, opts: this.jobOpts },
    );
  }

  async runNow(scheduleId: string): Promise<void> {
    const runAt = Date.now();
    await this.queue.add('deliver', { scheduleId, runAt }, { ...this.jobOpts, jobId: `now:${scheduleId}:${runAt}` });
  }

  async remove(scheduleId: string): Promise<void> {
    await this.queue.removeJobScheduler(scheduleId);
  }

  async nextRun(scheduleId: string): Promise<string | null> {
    const s = await this.queue.getJobScheduler(scheduleId);
    return s?.next ? new Date(s.next).toISOString() : null;
  }

  async close(): Promise<void> {
    await this.queue.close().catch(() => undefined);
  }
}

/**
 * The delivery worker: `concurrency` deliveries at a time per process, at most one per owner, so
 * scheduled runs (background work) hold a bounded share of the heavy-call slots interactive calls share
 * and one owner's slow receiver holds one delivery, not everyone's.
 */
export function startDeliveryWorker(
  redisUrl: string,
  deliver: (job: DeliveryJob) => Promise<DeliveryResult>,
  log: Logger,
  concurrency: number,
): Worker<DeliveryData> {
  const worker = new Worker<DeliveryData>(
    DELIVERY_QUEUE,
    async (job: Job<DeliveryData>, token?: string) => {
      const runAt = job.data.runAt ?? job.opts.prevMillis ?? job.timestamp;
      const result = await deliver({
        scheduleId: job.data.scheduleId,
        runAt,
        attempt: job.attemptsMade + 1,
        maxAttempts: job.opts.attempts ?? DELIVERY_ATTEMPTS,
      });
      // BullMQ retries a thrown job after its backoff; the attempt is recorded already.
      if (result.next === 'retry') throw new Error(result.detail);
      // The owner has a delivery under way here: this one steps aside (no try counted) so other owners'
      // jobs take the free slots, and comes back shortly.
      if (result.next === 'wait') {
        await job.moveToDelayed(Date.now() + OWNER_TURN_MS, token);
        throw new DelayedError();
      }
    },
    {
      connection: { url: redisUrl, maxRetriesPerRequest: null } as never,
      concurrency,
      lockDuration: LOCK_DURATION_MS,
      stalledInterval: STALLED_INTERVAL_MS,
      maxStalledCount: 1,
    },
  );
  worker.on('error', (err) => log.warn({ err: err.message }, 'delivery worker: Redis error'));
  worker.on('failed', (job, err) => {
    if (err instanceof UnrecoverableError) return;
    log.debug({ jobId: job?.id, err: err.message }, 'delivery try failed');
  });
  return worker;
}

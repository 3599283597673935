import { Queue, QueueEvents, type Job } from 'bullmq';
import IORedis from 'ioredis';
import { AppError } from '@quarry/errors';
import { closeBullmq } from '@quarry/runtime';
import { inSpan, SpanKind, traceCarrier } from '@quarry/tracing';
import type { ChartQueue, QueuedRender } from '../ports/chart-queue.port';
import { renderTimeoutOf, type RenderJob } from '../ports/chart-renderer.port';
import {
  ATTEMPTS,
  CHART_QUEUE,
  EVENTS_MAX_LEN,
  KEEP_COMPLETED,
  KEEP_FAILED,
  QUEUE_FULL_RETRY_AFTER_SECONDS,
  resultKey,
} from './bullmq-names';

/** BullMQ's `waitUntilFinished` rejection when its ttl passes (bullmq/dist/cjs/classes/job.js). */
const WAIT_TIMED_OUT = /timed out before finishing/;

export interface BullMqChartQueueSettings {
  redisUrl: string;
  /** Jobs that may wait for a worker; more are refused at once. */
  maxWaiting: number;
}

const retryStrategy = (n: number) => Math.min(n * 200, 2000);
const CLOSE_WAIT_MS = 3000;

/** Producer side: adds render jobs to Redis, waits for their completion events, takes the PNG. */
export class BullMqChartQueue implements ChartQueue {
  private readonly connection: IORedis;
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly maxWaiting: number;

  constructor(settings: BullMqChartQueueSettings) {
    this.maxWaiting = settings.maxWaiting;
    // No offline queue: while Redis is down a call fails at once instead of piling up.
    this.connection = new IORedis(settings.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy,
    });
    this.connection.on('error', () => undefined);
    this.queue = new Queue(CHART_QUEUE, {
      connection: this.connection,
      streams: { events: { maxLen: EVENTS_MAX_LEN } },
    });
    this.queue.on('error', () => undefined);
    // Job.waitUntilFinished adds one 'closing' listener per caller in flight and removes it when the
    // caller settles; up to maxWaiting callers plus the active ones are normal, not a leak.
    this.queue.setMaxListeners(0);
    this.events = new QueueEvents(CHART_QUEUE, { connection: { url: settings.redisUrl, retryStrategy } as never });
    this.events.on('error', () => undefined);
  }

  private unreachable(cause?: unknown): AppError {
    return AppError.unavailable('The chart queue (Redis) is unreachable; charts cannot be rendered right now', cause);
  }

  /** A write refused under maxmemory with noeviction is load, not a fault: the client may retry. */
  private storeFailure(err: unknown): AppError {
    if (err instanceof Error && err.message.startsWith('OOM ')) {
      return AppError.overloaded('The chart queue is out of memory; try again shortly', QUEUE_FULL_RETRY_AFTER_SECONDS);
    }
    return this.unreachable(err);
  }

  async render(job: RenderJob, { timeoutMs, requestId }: { timeoutMs: number; requestId: string }): Promise<string> {
    if (this.connection.status !== 'ready') throw this.unreachable();
    let added: Job;
    try {
      // Count, then add: callers arriving together all see the same count, so the bound can be
      // overshot by as many as arrive at once. Making it exact would need our own Lua around BullMQ's.
      const waiting = await this.queue.getWaitingCount();
      if (waiting >= this.maxWaiting) {
        throw AppError.overloaded(
          `The chart queue is full (${waiting} waiting); try again shortly`,
          QUEUE_FULL_RETRY_AFTER_SECONDS,
        );
      }
      // OpenTelemetry's messaging conventions: a producer span for the send, its context in the message.
      added = await inSpan(
        `publish ${CHART_QUEUE}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'bullmq',
            'messaging.operation.type': 'send',
            'messaging.destination.name': CHART_QUEUE,
          },
        },
        async (span) => {
          const data: QueuedRender = { ...job, requestId, ...traceCarrier() };
          const queued = await this.queue.add('render', data, {
            attempts: ATTEMPTS,
            removeOnComplete: KEEP_COMPLETED,
            removeOnFail: KEEP_FAILED,
          });
          if (queued.id) span?.setAttribute('messaging.message.id', queued.id);
          return queued;
        },
      );
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw this.storeFailure(err);
    }
    const jobId = added.id;
    if (!jobId) throw AppError.internal('The chart queue gave the job no id');
    const started = Date.now();
    try {
      await added.waitUntilFinished(this.events, timeoutMs);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      // BullMQ's own ttl timer says so in its message; the clock check covers the rest. The timer may fire
      // a millisecond before Date.now() has moved on by the full ttl, so elapsed time alone was flaky.
      if (WAIT_TIMED_OUT.test(reason) || Date.now() - started >= timeoutMs) {
        // A waiting job is dropped so no worker spends a render on it; an active one is locked and
        // cannot be, and its PNG expires unread.
        await Promise.all([
          added.remove().catch(() => undefined),
          this.connection.del(resultKey(jobId)).catch(() => undefined),
        ]);
        throw AppError.timeout(`The chart was not rendered within ${timeoutMs} ms`);
      }
      // A job that finished before we listened, and was already cleaned away, still left its PNG.
      const early = await this.takeResult(jobId).catch(() => null);
      if (early !== null) return early;
      const renderTimeout = renderTimeoutOf(reason);
      if (renderTimeout !== undefined) throw AppError.timeout(`The chart took longer than ${renderTimeout} ms to draw`);
      if (this.connection.status !== 'ready') throw this.unreachable(err);
      throw AppError.internal('Rendering the chart failed', err);
    }
    const png = await this.takeResult(jobId);
    if (png === null) throw AppError.internal('The chart worker returned no image');
    return png;
  }

  /** GET and DEL in one transaction rather than GETDEL, which Redis before 6.2 lacks. */
  private async takeResult(jobId: string): Promise<string | null> {
    const key = resultKey(jobId);
    let replies: Array<[Error | null, unknown]> | null;
    try {
      replies = await this.connection.multi().get(key).del(key).exec();
    } catch (err) {
      throw this.unreachable(err);
    }
    const [getReply] = replies ?? [];
    if (!getReply || getReply[0]) throw this.unreachable(getReply?.[0]);
    return typeof getReply[1] === 'string' ? getReply[1] : null;
  }

  async ready(): Promise<void> {
    if (this.connection.status !== 'ready') throw this.unreachable();
    await this.connection.ping();
  }

  async counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
  }

  async close(): Promise<void> {
    // Bounded: Redis may be gone already, and BullMQ's close would wait for it for ever.
    await closeBullmq(this.events, this.events.close(), CLOSE_WAIT_MS);
    await closeBullmq(this.queue, this.queue.close(), CLOSE_WAIT_MS);
    this.connection.disconnect();
  }
}

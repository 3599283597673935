import { Queue, QueueEvents } from 'bullmq';
import IORedis from 'ioredis';
import { AppError } from '@quarry/errors';
import type { ChartQueue, QueuedRender } from '../ports/chart-queue.port';
import type { RenderJob } from '../ports/chart-renderer.port';
import { ATTEMPTS, CHART_QUEUE } from './bullmq-names';

/** Producer side: adds render jobs to Redis and waits for their completion events. */
export class BullMqChartQueue implements ChartQueue {
  private readonly connection: IORedis;
  private readonly queue: Queue;
  private readonly events: QueueEvents;

  constructor(redisUrl: string) {
    // No offline queue: while Redis is down a call fails at once instead of piling up.
    this.connection = new IORedis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(n * 200, 2000) });
    this.connection.on('error', () => undefined);
    this.queue = new Queue(CHART_QUEUE, { connection: this.connection });
    this.queue.on('error', () => undefined);
    this.events = new QueueEvents(CHART_QUEUE, { connection: { url: redisUrl, retryStrategy: (n: number) => Math.min(n * 200, 2000) } as never });
    this.events.on('error', () => undefined);
  }

  private unreachable(cause?: unknown): AppError {
    return AppError.unavailable('The chart queue (Redis) is unreachable; charts cannot be rendered right now', cause);
  }

  async render(job: RenderJob, { timeoutMs, requestId }: { timeoutMs: number; requestId: string }): Promise<string> {
    if (this.connection.status !== 'ready') throw this.unreachable();
    let added;
    try {
      const data: QueuedRender = { ...job, requestId };
      added = await this.queue.add('render', data, {
        attempts: ATTEMPTS,
        backoff: { type: 'fixed', delay: 200 },
        removeOnComplete: { age: 300, count: 1000 },
        removeOnFail: { age: 3600 },
      });
    } catch (err) {
      throw this.unreachable(err);
    }
    try {
      const result = (await added.waitUntilFinished(this.events, timeoutMs)) as unknown;
      if (typeof result !== 'string') throw AppError.internal('The chart worker returned no image');
      return result;
    } catch (err) {
      if (err instanceof AppError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      if (/timed out/i.test(message)) {
        await added.remove().catch(() => undefined);
        throw new AppError('TIMEOUT', `The chart was not rendered within ${timeoutMs} ms`);
      }
      if (this.connection.status !== 'ready') throw this.unreachable(err);
      throw AppError.internal('Rendering the chart failed', err);
    }
  }

  async ready(): Promise<void> {
    if (this.connection.status !== 'ready') throw this.unreachable();
    await this.connection.ping();
  }

  async counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
  }

  async close(): Promise<void> {
    await this.events.close().catch(() => undefined);
    await this.queue.close().catch(() => undefined);
    this.connection.disconnect();
  }
}

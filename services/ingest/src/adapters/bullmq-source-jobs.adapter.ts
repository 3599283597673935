import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type IORedis from 'ioredis';
import type { Logger } from '@quarry/logger';
import { closeBullmq, closeBullmqWorker, lostAfterReady } from '@quarry/runtime';
import type { SourceJob, SourceJobOutcome, SourceJobs } from '../ports/source-jobs.port';

export const SOURCE_QUEUE = 'quarry-source-runs';
/**
 * A worker that dies mid-run loses its lock after this long and the run is taken again; BullMQ renews the
 * lock every half of it while a run lasts (a 3M-row load holds it for minutes).
 */
const LOCK_DURATION_MS = 30_000;
const STALLED_INTERVAL_MS = 15_000;
/** How soon a run that waited for the index's load lock is taken up again. */
const LATER_MS = 1_000;
const KEPT = { count: 1000, age: 7 * 24 * 3600 };
/** A run under way may end within this at a stop; else its lock lapses and another worker takes it again. */
const RUN_CLOSE_WAIT_MS = 10_000;
const QUEUE_CLOSE_WAIT_MS = 3000;

const runJobId = (runId: string) => `run-${runId}`;
/** The states of a job that will still run (or is running). */
const PENDING = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/** Source runs and refresh crons as BullMQ jobs and job schedulers, one scheduler per source. */
export class BullMqSourceJobs implements SourceJobs {
  private readonly queue: Queue<SourceJob>;
  private worker: Worker<SourceJob> | undefined;
  private readonly redisLost: () => boolean;

  constructor(
    connection: IORedis,
    private readonly redisUrl: string,
    private readonly log: Logger,
  ) {
    this.redisLost = lostAfterReady(connection);
    this.queue = new Queue<SourceJob>(SOURCE_QUEUE, { connection });
    this.queue.on('error', () => undefined);
  }

  async enqueue(job: Required<SourceJob>, delayMs?: number): Promise<void> {
    // The run id as the job id: a run is queued once, however often the call is retried.
    await this.queue.add('run', job, {
      jobId: runJobId(job.runId),
      removeOnComplete: KEPT,
      removeOnFail: KEPT,
      ...(delayMs ? { delay: delayMs } : {}),
    });
  }

  async pending(runId: string): Promise<boolean> {
    const job = await this.queue.getJob(runJobId(runId));
    if (!job) return false;
    return PENDING.has(await job.getState());
  }

  async schedule(sourceId: string, cron: string, timeZone: string): Promise<void> {
    await this.queue.upsertJobScheduler(
      sourceId,
      { pattern: cron, tz: timeZone },
      { name: 'refresh', data: { sourceId }, opts: { removeOnComplete: KEPT, removeOnFail: KEPT } },
    );
  }

  async unschedule(sourceId: string): Promise<void> {
    await this.queue.removeJobScheduler(sourceId);
  }

  async nextRun(sourceId: string): Promise<string | null> {
    const s = await this.queue.getJobScheduler(sourceId);
    return s?.next ? new Date(s.next).toISOString() : null;
  }

  work(run: (job: SourceJob) => Promise<SourceJobOutcome>, concurrency: number): void {
    const worker = new Worker<SourceJob>(
      SOURCE_QUEUE,
      async (job: Job<SourceJob>, token?: string) => {
        const outcome = await run(job.data);
        if (outcome === 'later') {
          await job.moveToDelayed(Date.now() + LATER_MS, token);
          throw new DelayedError();
        }
      },
      {
        connection: { url: this.redisUrl, maxRetriesPerRequest: null } as never,
        concurrency,
        lockDuration: LOCK_DURATION_MS,
        stalledInterval: STALLED_INTERVAL_MS,
        maxStalledCount: 2,
      },
    );
    worker.on('error', (err) => this.log.warn({ err: err.message }, 'source worker: Redis error'));
    worker.on('failed', (job, err) => this.log.warn({ jobId: job?.id, err: err.message }, 'source job failed'));
    this.worker = worker;
  }

  /** Bounded: BullMQ's close waits for its Redis for ever, and at a stop that Redis may be gone already. */
  async close(): Promise<void> {
    const lost = this.redisLost();
    await closeBullmqWorker(this.worker, { lost, graceMs: RUN_CLOSE_WAIT_MS, goneMs: QUEUE_CLOSE_WAIT_MS });
    await closeBullmq(this.queue, this.queue.close(), QUEUE_CLOSE_WAIT_MS);
  }
}

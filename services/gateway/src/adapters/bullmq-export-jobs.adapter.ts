import { randomBytes } from 'node:crypto';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import IORedis from 'ioredis';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { closeBullmq, closeBullmqWorker, lostAfterReady } from '@quarry/runtime';
import {
  ExportFailed,
  type ExportJob,
  type ExportJobs,
  type ExportJobStatus,
  type ExportRun,
  type ExportRunOutcome,
} from '../ports/export-jobs.port';

export const EXPORT_QUEUE = 'quarry-exports';
/**
 * A gateway that dies mid-export loses the job's lock after this long and another run starts from the
 * beginning; BullMQ renews the lock every half of it while the export runs (the engine writes the file
 * elsewhere, so this event loop stays free to renew it).
 */
const LOCK_DURATION_MS = 10_000;
const STALLED_INTERVAL_MS = 5_000;
/** One run taken up again after a crash; an export whose run dies again fails rather than loop. */
const MAX_STALLED_COUNT = 1;
/** Runs handed back by a stopping process (a rolling restart) before the export fails. */
const ATTEMPTS = 3;
/** How soon a job set aside for its owner's turn is taken up again. */
const OWNER_TURN_MS = 500;
const STALLED = /stalled more than allowable limit/;
/** BullMQ's largest priority (2^21 - 1); a turn past it shares the last place. */
const MAX_PRIORITY = 2_097_151;

/** Export jobs on BullMQ: the job's id is the export's. */
export class BullMqExportJobs implements ExportJobs {
  private readonly connection: IORedis;
  private readonly connectionLost: () => boolean;
  private readonly queue: Queue<ExportJob>;
  private worker: Worker<ExportJob> | undefined;
  private readonly running = new Set<AbortController>();

  constructor(
    private readonly redisUrl: string,
    /** Kept as long as the export's record: the job answers for a record that outlived its run. */
    private readonly keepS: number,
    private readonly log: Logger,
  ) {
    this.connection = new IORedis(redisUrl, { maxRetriesPerRequest: 2 });
    this.connection.on('error', (err) => log.warn({ err: err.message }, 'exports: Redis error'));
    this.connectionLost = lostAfterReady(this.connection);
    this.queue = new Queue<ExportJob>(EXPORT_QUEUE, { connection: this.connection });
    this.queue.on('error', () => undefined);
  }

  private unreachable(cause: unknown): AppError {
    return AppError.unavailable('The export queue (Redis) is unreachable; exports cannot start right now', cause);
  }

  async add(job: ExportJob, turn: number): Promise<void> {
    try {
      await this.queue.add('export', job, {
        jobId: job.exportId,
        // BullMQ takes the lowest priority first, and in the order added within one: the owner's turn.
        priority: Math.min(Math.max(1, Math.floor(turn)), MAX_PRIORITY),
        attempts: ATTEMPTS,
        backoff: { type: 'fixed', delay: 1000 },
        removeOnComplete: { age: this.keepS },
        removeOnFail: { age: this.keepS },
      });
    } catch (err) {
      throw this.unreachable(err);
    }
  }

  async status(exportId: string): Promise<ExportJobStatus> {
    let job;
    let state;
    try {
      job = await this.queue.getJob(exportId);
      state = await job?.getState();
    } catch (err) {
      throw AppError.unavailable('The export queue (Redis) is unreachable; ask again shortly', err);
    }
    if (!job) return { state: 'missing', error: 'its job is no longer in the queue; start it again' };
    if (state === 'active') return { state: 'running' };
    if (state === 'completed') return { state: 'done' };
    if (state === 'failed') {
      const reason = job.failedReason ?? '';
      return {
        state: 'failed',
        error: STALLED.test(reason)
          ? 'the server stopped while it ran, and again when it was taken up again; start it again'
          : reason,
      };
    }
    return { state: 'queued' };
  }

  work(run: (job: ExportJob, run: ExportRun) => Promise<ExportRunOutcome>, concurrency: number): void {
    const worker = new Worker<ExportJob>(
      EXPORT_QUEUE,
      async (job: Job<ExportJob>, token?: string) => {
        const controller = new AbortController();
        this.running.add(controller);
        try {
          const outcome = await run(job.data, { run: randomBytes(8).toString('hex'), signal: controller.signal });
          if (outcome === 'wait') {
            await job.moveToDelayed(Date.now() + OWNER_TURN_MS, token);
            throw new DelayedError();
          }
        } catch (err) {
          if (err instanceof ExportFailed) throw new UnrecoverableError(err.message);
          throw err;
        } finally {
          this.running.delete(controller);
        }
      },
      {
        connection: { url: this.redisUrl, maxRetriesPerRequest: null } as never,
        concurrency,
        lockDuration: LOCK_DURATION_MS,
        stalledInterval: STALLED_INTERVAL_MS,
        maxStalledCount: MAX_STALLED_COUNT,
      },
    );
    worker.on('error', (err) => this.log.warn({ err: err.message }, 'export worker: Redis error'));
    // Not awaited: BullMQ waits for Redis for ever, and a gateway must listen while Redis is away.
    worker.waitUntilReady().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'export worker'));
    this.worker = worker;
  }

  async close(): Promise<void> {
    for (const c of this.running) c.abort(new Error('the server is stopping'));
    // Redis may already be gone, and BullMQ's close then waits for it for ever: the runs are aborted above,
    // so the worker closes by force and each close is bounded. Up, the worker first finishes connecting
    // (a stop right after the start): a connection closed while it initialises errs after its listeners go.
    await closeBullmqWorker(this.worker, {
      lost: this.connectionLost(),
      force: true,
      graceMs: CLOSE_WAIT_MS,
      goneMs: CLOSE_WAIT_MS,
    });
    await closeBullmq(this.queue, this.queue.close(), CLOSE_WAIT_MS);
    this.connection.disconnect();
  }
}

const CLOSE_WAIT_MS = 3000;

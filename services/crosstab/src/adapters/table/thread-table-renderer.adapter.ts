import { Piscina } from 'piscina';
import { AppError, abortReason, isErrorCode } from '@quarry/errors';
import type { CachedResult } from '@quarry/result-cache';
import { threadEntry } from '@quarry/runtime';
import type { TableJob } from '../../domain/table-result';
import type { TableRenderer } from '../../ports/table-renderer.port';
import { packGroups, packedBuffers } from './packed-groups';
import type { TableAnswer, TableTask } from './table-render.worker';

/** A piscina pool of threads that build and render tables (big HTML tables off the event loop). */
export class ThreadTableRenderer implements TableRenderer {
  private readonly pool: Piscina<TableTask, TableAnswer>;

  constructor({ threads }: { threads: number }) {
    this.pool = new Piscina({
      filename: threadEntry(__dirname, 'table-render.worker'),
      minThreads: 0,
      maxThreads: threads,
      // A thread that draws no table for a minute ends (each holds tens of MB).
      idleTimeout: 60_000,
    });
    // One thread is started with the service, its modules loaded: the first big table after a start (a
    // new pod's first crosstab) paid for starting it. Unused, it ends after the minute.
    this.pool.run('warm').catch(() => undefined);
  }

  async render(job: TableJob, signal?: AbortSignal): Promise<CachedResult> {
    const { groups, ...head } = job;
    // The groups go packed: their arrays are moved to the thread, not cloned on this loop.
    const packed = await packGroups(groups, job.spec.totals.length);
    if (signal?.aborted) throw abortReason(signal);
    try {
      const answer = await this.pool.run(
        { head, packed },
        { transferList: packedBuffers(packed), ...(signal ? { signal } : {}) },
      );
      if ('ok' in answer) return answer.ok;
      if (!('error' in answer)) throw AppError.internal('The table thread answered a table job as a warm-up.');
      const { code, detail } = answer.error;
      throw new AppError(isErrorCode(code) ? code : 'INTERNAL', detail);
    } catch (err) {
      if (signal?.aborted && !(err instanceof AppError)) throw abortReason(signal);
      throw err;
    }
  }

  /** Threads running now (the warm-up starts one with the service). */
  get threads(): number {
    return this.pool.threads.length;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

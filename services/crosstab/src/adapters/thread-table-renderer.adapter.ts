import { MessageChannel } from 'node:worker_threads';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Piscina } from 'piscina';
import { AppError, abortReason, isErrorCode } from '@quarry/errors';
import type { CachedResult } from '@quarry/result-cache';
import { threadEntry } from '@quarry/runtime';
import type { TableJob } from '../domain/table-result';
import type { TableRenderer } from '../ports/table-renderer.port';
import type { TableAnswer, TableTask } from './table-render.worker';

/**
 * Groups per message: cloning one slice takes a few milliseconds of this loop (about 1 ms per 1,000
 * groups measured), and other calls run between slices; cloning 85,000 groups at once held it ~70 ms.
 */
const SLICE = 4000;

/** A piscina pool of threads that build and render tables (issue #27: big HTML tables off the event loop). */
export class ThreadTableRenderer implements TableRenderer {
  private readonly pool: Piscina<TableTask, TableAnswer>;

  constructor({ threads }: { threads: number }) {
    this.pool = new Piscina({
      filename: threadEntry(__dirname, 'table-render.worker'),
      minThreads: 0,
      maxThreads: threads,
      // A process that never draws a big table keeps no thread; one that does keeps them a minute.
      idleTimeout: 60_000,
    });
  }

  async render(job: TableJob, signal?: AbortSignal): Promise<CachedResult> {
    const { groups, ...rest } = job;
    const { port1, port2 } = new MessageChannel();
    const task = this.pool.run(
      { port: port2, head: { ...rest, total: groups.length } },
      {
        transferList: [port2],
        ...(signal ? { signal } : {}),
      },
    );
    // Settled here too, so a rejection while slices are still being sent is never unhandled.
    task.catch(() => undefined);
    try {
      for (let at = 0; at < groups.length; at += SLICE) {
        if (signal?.aborted) break;
        port1.postMessage(groups.slice(at, at + SLICE));
        await yieldToLoop();
      }
      const answer = await task;
      if ('ok' in answer) return answer.ok;
      const { code, detail } = answer.error;
      throw new AppError(isErrorCode(code) ? code : 'INTERNAL', detail);
    } catch (err) {
      if (signal?.aborted && !(err instanceof AppError)) throw abortReason(signal);
      throw err;
    } finally {
      port1.close();
    }
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

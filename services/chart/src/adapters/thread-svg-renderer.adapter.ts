import { Piscina } from 'piscina';
import { threadEntry } from '@quarry/runtime';
import type { RenderJob, SvgRenderer } from '../ports/chart-renderer.port';

export interface ThreadSvgSettings {
  threads: number;
  /** The thread's module; tests put one in front of the real one (a slow render). */
  entry?: string;
}

/**
 * ECharts' server-side SVG renderer in a piscina thread pool: drawn on the worker's
 * own event loop, a big SVG held it past BullMQ's 5 s lock (renewed from that loop every 2.5 s), so the
 * job was taken for stalled and drawn again.
 */
export class ThreadSvgRenderer implements SvgRenderer {
  private readonly pool: Piscina<RenderJob, string>;

  constructor({ threads, entry }: ThreadSvgSettings) {
    this.pool = new Piscina({
      filename: entry ?? threadEntry(__dirname, 'svg-render.worker'),
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: 60_000,
    });
  }

  /** An abort ends the thread drawing it (piscina terminates a running task's thread). */
  render(job: RenderJob, signal?: AbortSignal): Promise<string> {
    return this.pool.run(job, signal ? { signal } : {});
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

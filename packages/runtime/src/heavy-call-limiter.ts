import { AppError, abortReason } from '@quarry/errors';

/**
 * Caps the heavy calls (searches, crosstabs) one process runs at once. DuckDB spreads each query over
 * its threads, so running more at a time only makes every one of them slower and holds more memory;
 * beyond the queue a caller is better served by a fast 503 with Retry-After than by a wait that ends
 * in a 504. One limiter per process, shared by the services hosted in it.
 */
export class HeavyCallLimiter {
  private running = 0;
  private readonly waiting: Array<{ start: () => void }> = [];

  constructor(
    readonly maxRunning: number,
    readonly maxQueued: number,
    private readonly retryAfterSeconds = 1,
  ) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.start();
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    if (this.running < this.maxRunning) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxQueued) {
      return Promise.reject(
        AppError.overloaded(
          `The server is busy (${this.running} heavy calls running, ${this.waiting.length} waiting); try again in ${this.retryAfterSeconds} s`,
          this.retryAfterSeconds,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        start: () => {
          signal.removeEventListener('abort', onAbort);
          this.running++;
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(entry);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }
}

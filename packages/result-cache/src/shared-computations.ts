import type { QuarryMetrics } from '@quarry/metrics';
import { cacheKeyOf } from './lru-result-cache.adapter';
import type { CacheKey } from './result-cache.port';

interface InFlight<T> {
  readonly result: Promise<T>;
  readonly controller: AbortController;
  waiters: number;
}

/** The computation, begun now; a synchronous throw is its rejection. */
function started<T>(compute: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return compute(signal);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Why a caller's wait ended before the answer: its own signal's reason, as its own computation would. */
function gaveUp(signal: AbortSignal): unknown {
  return signal.reason;
}

/**
 * Identical computations in flight, run once: callers asking with the same key while it runs wait on
 * the first one's answer (result or error) instead of starting their own. The computation's signal
 * aborts only when every caller waiting on it has given up (its own signal aborted), so a caller who goes
 * away costs nothing more, and one who stays still gets the answer. Keys are what decide the answer (the
 * result cache's key: version, params, realms, options); a finished computation is forgotten at once,
 * since what it answered is the result cache's to keep. One process's calls only: each process computes
 * its own (a shared in-flight table across replicas would cost a round trip on every call).
 */
export class SharedComputations {
  private readonly inFlight = new Map<string, InFlight<unknown>>();

  constructor(
    private readonly kind: 'crosstab' | 'search',
    private readonly metrics?: QuarryMetrics,
  ) {}

  /** Computations now running (each possibly awaited by several callers). */
  get size(): number {
    return this.inFlight.size;
  }

  run<T>(key: CacheKey, signal: AbortSignal | undefined, compute: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (signal?.aborted) return Promise.reject(gaveUp(signal));
    const id = cacheKeyOf(key);
    let entry = this.inFlight.get(id) as InFlight<T> | undefined;
    if (entry) {
      this.metrics?.computations.inc({ kind: this.kind, outcome: 'joined' });
    } else {
      const controller = new AbortController();
      const created: InFlight<T> = {
        controller,
        waiters: 0,
        result: started(compute, controller.signal).finally(() => {
          this.inFlight.delete(id);
          this.metrics?.computationsInFlight.dec({ kind: this.kind });
          if (controller.signal.aborted) this.metrics?.computations.inc({ kind: this.kind, outcome: 'cancelled' });
        }),
      };
      // Nobody may be left waiting when it fails: every caller has its own handler below.
      created.result.catch(() => undefined);
      this.inFlight.set(id, created as InFlight<unknown>);
      this.metrics?.computationsInFlight.inc({ kind: this.kind });
      this.metrics?.computations.inc({ kind: this.kind, outcome: 'computed' });
      entry = created;
    }
    return this.wait(entry, signal);
  }

  private wait<T>(entry: InFlight<T>, signal: AbortSignal | undefined): Promise<T> {
    entry.waiters += 1;
    if (!signal) return entry.result;
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        entry.waiters -= 1;
        if (entry.waiters === 0) entry.controller.abort(signal.reason);
        reject(gaveUp(signal));
      };
      signal.addEventListener('abort', leave, { once: true });
      entry.result.then(
        (value) => {
          signal.removeEventListener('abort', leave);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', leave);
          reject(err);
        },
      );
    });
  }
}

import { AppError, abortReason } from '@quarry/errors';

export interface HeavyCallLimits {
  /** Calls running at once in this limiter, over every caller. */
  maxRunning: number;
  /** Calls one caller may have running at once (QUARRY_HEAVY_PER_CALLER). */
  perCaller: number;
  /** Calls that may wait; a caller with nothing running or waiting is admitted to the wait even beyond it. */
  maxQueued: number;
  retryAfterSeconds?: number;
}

interface Waiter {
  start: () => void;
}

interface CallerState {
  running: number;
  waiting: Waiter[];
  /** When this caller last started a call (a tick of this limiter); 0: not since it was last idle. */
  served: number;
}

/**
 * Caps the heavy calls (searches, crosstabs, chart renders) one process runs at once, and admits them
 * fairly per caller (DESIGN "Embedding, fairness and audit"): one caller runs at most `perCaller` at
 * a time, and a freed slot goes round robin to the next caller with work waiting, so one caller's
 * queue of big calls never holds back another caller's small one. DuckDB spreads each query over its
 * threads, so running more at a time only makes every one of them slower and holds more memory;
 * beyond the queue a caller is better served by a fast 503 with Retry-After than by a wait that ends
 * in a 504. One limiter per process, shared by the services hosted in it.
 */
export class HeavyCallLimiter {
  private running = 0;
  private waitingTotal = 0;
  private tick = 0;
  /** Callers with something running or waiting. */
  private readonly callers = new Map<string, CallerState>();
  readonly maxRunning: number;
  readonly perCaller: number;
  readonly maxQueued: number;
  private readonly retryAfterSeconds: number;

  constructor(limits: HeavyCallLimits) {
    this.maxRunning = limits.maxRunning;
    this.perCaller = Math.min(limits.perCaller, limits.maxRunning);
    this.maxQueued = limits.maxQueued;
    this.retryAfterSeconds = limits.retryAfterSeconds ?? 1;
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waitingTotal;
  }

  /** `caller` keys the fairness (the user's id); calls of one caller start in the order they came. */
  async run<T>(caller: string, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(caller, signal);
    try {
      return await work();
    } finally {
      this.release(caller);
    }
  }

  private stateOf(caller: string): CallerState {
    let state = this.callers.get(caller);
    if (!state) {
      state = { running: 0, waiting: [], served: 0 };
      this.callers.set(caller, state);
    }
    return state;
  }

  private acquire(caller: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(abortReason(signal));
    const state = this.stateOf(caller);
    if (this.running < this.maxRunning && state.running < this.perCaller && state.waiting.length === 0) {
      this.running++;
      state.running++;
      state.served = ++this.tick;
      return Promise.resolve();
    }
    // A caller's first call is never refused for the others' backlog: the bound keeps one caller from
    // piling up work, not a newcomer from getting in line.
    const newcomer = state.running === 0 && state.waiting.length === 0;
    if (this.waitingTotal >= this.maxQueued && !newcomer) {
      this.forgetIfIdle(caller, state);
      return Promise.reject(
        AppError.overloaded(
          `The server is busy (${this.running} heavy calls running, ${this.waitingTotal} waiting); try again in ${this.retryAfterSeconds} s`,
          this.retryAfterSeconds,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Waiter = {
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const at = state.waiting.indexOf(entry);
        if (at >= 0) {
          state.waiting.splice(at, 1);
          this.waitingTotal--;
          this.forgetIfIdle(caller, state);
        }
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      state.waiting.push(entry);
      this.waitingTotal++;
    });
  }

  private release(caller: string): void {
    this.running--;
    const state = this.callers.get(caller);
    if (state) {
      state.running--;
      this.forgetIfIdle(caller, state);
    }
    this.admit();
  }

  /**
   * Hands free slots round robin: of the callers with a call waiting that may run one more, the one
   * served longest ago starts its oldest call (a caller not served since it was idle comes first).
   */
  private admit(): void {
    while (this.running < this.maxRunning && this.waitingTotal > 0) {
      let chosen: CallerState | undefined;
      for (const state of this.callers.values()) {
        if (state.waiting.length > 0 && state.running < this.perCaller && (!chosen || state.served < chosen.served))
          chosen = state;
      }
      if (!chosen) return;
      const next = chosen.waiting.shift()!;
      this.waitingTotal--;
      this.running++;
      chosen.running++;
      chosen.served = ++this.tick;
      next.start();
    }
  }

  private forgetIfIdle(caller: string, state: CallerState): void {
    if (state.running === 0 && state.waiting.length === 0) this.callers.delete(caller);
  }
}

/** One policy of a limiter, as `RateLimit-Policy` lists it: `quota` requests per `windowSeconds`. */
export interface RateLimitPolicy {
  name: string;
  quota: number;
  windowSeconds: number;
}

/** Where a key stands after a take: the policy nearest to running out, what is left of it, and when it resets. */
export interface RateLimitState {
  policy: string;
  remaining: number;
  resetSeconds: number;
}

export type RateLimitTake =
  | { ok: true; state: RateLimitState }
  | { ok: false; retryAfterSeconds: number; firstRefusal: boolean; state: RateLimitState };

/** Per-key request admission (QUARRY_RATE_LIMIT, QUARRY_RATE_BURST, QUARRY_ANON_RATE_LIMIT). */
export interface RateLimiter {
  /** Every policy a take is counted against, in the order the headers list them. */
  readonly policies: readonly RateLimitPolicy[];
  /**
   * Takes one request from `key`'s allowance: admitted, or refused with when the next one would be;
   * `firstRefusal` is set on the first refusal of a window, so a flood can be recorded once. `state` says
   * where the key stands afterwards (a refusal: nothing left, reset when it may retry).
   */
  take(key: string): Promise<RateLimitTake>;
}

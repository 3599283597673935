/** Per-key request admission (QUARRY_RATE_LIMIT, QUARRY_RATE_BURST). */
export interface RateLimiter {
  /** Takes one request from `key`'s allowance: admitted, or refused with when the next one would be. */
  take(key: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }>;
}

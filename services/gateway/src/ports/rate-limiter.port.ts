/** Per-key request admission (QUARRY_RATE_LIMIT, QUARRY_RATE_BURST, QUARRY_ANON_RATE_LIMIT). */
export interface RateLimiter {
  /**
   * Takes one request from `key`'s allowance: admitted, or refused with when the next one would be;
   * `firstRefusal` is set on the first refusal of a window, so a flood can be recorded once.
   */
  take(key: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number; firstRefusal: boolean }>;
}

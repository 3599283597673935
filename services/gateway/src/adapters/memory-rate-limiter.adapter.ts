import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiter } from '../ports/rate-limiter.port';

/**
 * Per-token limits with rate-limiter-flexible, in this process's memory: `perSecond` requests a second,
 * and `burst` more that refill over the time `perSecond` takes to earn them back.
 *
 * In memory is right for one gateway (`QUARRY_TARGET=all`). A split deployment with several gateway
 * replicas multiplies the limit by their number: sharing it needs the same two limiters as
 * RateLimiterRedis on the deployment's Redis (same options, plus `storeClient`), so every replica counts
 * against one counter per token.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly limiter: { consume(key: string): Promise<RateLimiterRes> };

  constructor(perSecond: number, burst: number) {
    // Whole points over a window long enough to hold them: 0.5/s is 1 point per 2 s, 20/s is 20 per 1 s.
    const points = Math.max(1, Math.round(perSecond));
    const rate = new RateLimiterMemory({ keyPrefix: 'rate', points, duration: points / perSecond });
    this.limiter =
      burst > 0
        ? new BurstyRateLimiter(
            rate,
            new RateLimiterMemory({ keyPrefix: 'burst', points: burst, duration: burst / perSecond }),
          )
        : rate;
  }

  async take(key: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
    try {
      await this.limiter.consume(key);
      return { ok: true };
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
    }
  }
}

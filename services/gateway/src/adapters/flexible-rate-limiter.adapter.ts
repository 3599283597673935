import type IORedis from 'ioredis';
import { LRUCache } from 'lru-cache';
import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type IRateLimiterOptions,
} from 'rate-limiter-flexible';
import type { RateLimiter } from '../ports/rate-limiter.port';

/** Where the counters live: the deployment's Redis (shared by every gateway replica), else this process. */
export interface RateLimiterStore {
  redis: IORedis;
  /** Namespaces the keys, so deployments sharing one Redis do not share limits. */
  keyPrefix: string;
}

/**
 * Per-token limits with rate-limiter-flexible: `perSecond` requests a second, and `burst` more that refill
 * over the time `perSecond` takes to earn them back.
 *
 * With a Redis every gateway replica counts against one counter per token (RateLimiterRedis), so N
 * replicas behind a round-robin balancer still admit one limit, not N. While Redis cannot be reached an
 * in-memory insurance limiter with the same options takes over per process (degraded to per-replica
 * counting rather than refusing or admitting everything). Without a Redis (one process) memory is exact.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiter: { consume(key: string): Promise<RateLimiterRes> };

  constructor(perSecond: number, burst: number, store?: RateLimiterStore) {
    // Whole points over a window long enough to hold them: 0.5/s is 1 point per 2 s, 20/s is 20 per 1 s.
    const points = Math.max(1, Math.round(perSecond));
    const make = (name: string, opts: IRateLimiterOptions) => {
      if (!store) return new RateLimiterMemory({ ...opts, keyPrefix: name });
      return new RateLimiterRedis({
        ...opts,
        storeClient: store.redis,
        keyPrefix: `${store.keyPrefix}:${name}`,
        insuranceLimiter: new RateLimiterMemory({ ...opts, keyPrefix: `insurance:${name}` }),
      });
    };
    const rate = make('rate', { points, duration: points / perSecond });
    this.limiter =
      burst > 0 ? new BurstyRateLimiter(rate, make('burst', { points: burst, duration: burst / perSecond })) : rate;
  }

  /** Keys refused in their current window: only the first refusal of a window is told as such. */
  private readonly refusing = new LRUCache<string, true>({ max: 100_000 });

  async take(key: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number; firstRefusal: boolean }> {
    try {
      await this.limiter.consume(key);
      return { ok: true };
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const firstRefusal = !this.refusing.has(key);
      this.refusing.set(key, true, { ttl: Math.max(1, res.msBeforeNext) });
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)), firstRefusal };
    }
  }
}

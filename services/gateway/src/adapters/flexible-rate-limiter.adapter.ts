import type IORedis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';
import type { RateLimiter, RateLimitPolicy, RateLimitTake } from '../ports/rate-limiter.port';

type Consumer = { consume(key: string): Promise<RateLimiterRes> };

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
  private readonly rate: Consumer;
  private readonly burst: Consumer | undefined;
  readonly policies: readonly RateLimitPolicy[];

  /** `name` names the policies in the RateLimit headers (`<name>`, and `<name>-burst` for the burst). */
  constructor(perSecond: number, burst: number, store?: RateLimiterStore, name = 'token') {
    // Whole points over a window long enough to hold them: 0.5/s is 1 point per 2 s, 20/s is 20 per 1 s.
    const points = Math.max(1, Math.round(perSecond));
    const make = (part: string, opts: IRateLimiterOptions) => {
      if (!store) return new RateLimiterMemory({ ...opts, keyPrefix: part });
      return new RateLimiterRedis({
        ...opts,
        storeClient: store.redis,
        keyPrefix: `${store.keyPrefix}:${part}`,
        insuranceLimiter: new RateLimiterMemory({ ...opts, keyPrefix: `insurance:${part}` }),
      });
    };
    const window = points / perSecond;
    this.rate = make('rate', { points, duration: window });
    // The burst is taken only when the rate is spent (what rate-limiter-flexible's BurstyRateLimiter does),
    // here by hand so that what is left of each is known for the headers.
    this.burst = burst > 0 ? make('burst', { points: burst, duration: burst / perSecond }) : undefined;
    this.policies = [
      { name, quota: points, windowSeconds: Math.max(1, Math.ceil(window)) },
      ...(burst > 0
        ? [{ name: `${name}-burst`, quota: burst, windowSeconds: Math.max(1, Math.ceil(burst / perSecond)) }]
        : []),
    ];
  }

  /** Keys refused in their current window: only the first refusal of a window is told as such. */
  private readonly refusing = new LRUCache<string, true>({ max: 100_000 });

  async take(key: string): Promise<RateLimitTake> {
    const [ratePolicy, burstPolicy] = this.policies;
    const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
    let spent: RateLimiterRes;
    try {
      const res = await this.rate.consume(key);
      return {
        ok: true,
        state: { policy: ratePolicy!.name, remaining: res.remainingPoints, resetSeconds: seconds(res.msBeforeNext) },
      };
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      spent = res;
    }
    let msBeforeNext = spent.msBeforeNext;
    if (this.burst && burstPolicy) {
      try {
        const res = await this.burst.consume(key);
        return {
          ok: true,
          state: { policy: burstPolicy.name, remaining: res.remainingPoints, resetSeconds: seconds(res.msBeforeNext) },
        };
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        // The next request is admitted when either refills.
        msBeforeNext = Math.min(msBeforeNext, res.msBeforeNext);
      }
    }
    const firstRefusal = !this.refusing.has(key);
    this.refusing.set(key, true, { ttl: Math.max(1, msBeforeNext) });
    const retryAfterSeconds = seconds(msBeforeNext);
    return {
      ok: false,
      retryAfterSeconds,
      firstRefusal,
      state: { policy: (burstPolicy ?? ratePolicy)!.name, remaining: 0, resetSeconds: retryAfterSeconds },
    };
  }
}

import type IORedis from 'ioredis';
import { AppError } from '@quarry/errors';
import type { IdempotencyClaim, IdempotencyStore } from '../ports/idempotency-store.port';
import { claimOf, type IdempotencyEntry } from './idempotency-entry';

// Released only while still running under the caller's fingerprint: an answer once kept stays.
const RELEASE = `local v = redis.call('GET', KEYS[1])
if v and cjson.decode(v).fp == ARGV[1] and cjson.decode(v).answer == nil then return redis.call('DEL', KEYS[1]) end
return 0`;

/** Idempotency keys in the deployment's Redis (`SET NX PX` claims them), shared by every gateway replica. */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: IORedis,
    private readonly prefix: string,
  ) {}

  private k(key: string): string {
    return `${this.prefix}:${key}`;
  }

  /** A Redis that does not answer is a 503 for the call, never a 500: the key is still unknown. */
  private async reach<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw AppError.unavailable('Idempotency-Key: the store of keys (Redis) cannot be reached now; retry', err);
    }
  }

  claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyClaim> {
    return this.reach(() => this.claimOnce(key, fingerprint, ttlMs));
  }

  private async claimOnce(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyClaim> {
    const set = await this.redis.set(this.k(key), JSON.stringify({ fp: fingerprint }), 'PX', ttlMs, 'NX');
    if (set === 'OK') return { state: 'claimed' };
    const raw = await this.redis.get(this.k(key));
    // Expired or released in between: claim it now.
    if (raw === null) return this.claimOnce(key, fingerprint, ttlMs);
    return claimOf(JSON.parse(raw) as IdempotencyEntry, fingerprint);
  }

  async complete(key: string, fingerprint: string, answer: string, ttlMs: number): Promise<void> {
    await this.reach(() => this.redis.set(this.k(key), JSON.stringify({ fp: fingerprint, answer }), 'PX', ttlMs));
  }

  async release(key: string, fingerprint: string): Promise<void> {
    await this.reach(() => this.redis.eval(RELEASE, 1, this.k(key), fingerprint));
  }
}

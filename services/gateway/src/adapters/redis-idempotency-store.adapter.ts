import type IORedis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { AppError } from '@quarry/errors';
import type { IdempotencyClaim, IdempotencyStore } from '../ports/idempotency-store.port';

interface Entry {
  fp: string;
  answer?: string;
}

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
    return stateOf(JSON.parse(raw) as Entry, fingerprint);
  }

  async complete(key: string, fingerprint: string, answer: string, ttlMs: number): Promise<void> {
    await this.reach(() => this.redis.set(this.k(key), JSON.stringify({ fp: fingerprint, answer }), 'PX', ttlMs));
  }

  async release(key: string, fingerprint: string): Promise<void> {
    await this.reach(() => this.redis.eval(RELEASE, 1, this.k(key), fingerprint));
  }
}

/** Idempotency keys in this process, for a gateway without a Redis (one process serves every call). */
export class MemoryIdempotencyStore implements IdempotencyStore {
  // Bounded: past this many live keys the oldest go first (a retry of one of them runs again).
  private readonly entries = new LRUCache<string, Entry>({ max: 100_000 });

  async claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyClaim> {
    const e = this.entries.get(key);
    if (!e) {
      this.entries.set(key, { fp: fingerprint }, { ttl: ttlMs });
      return { state: 'claimed' };
    }
    return stateOf(e, fingerprint);
  }

  async complete(key: string, fingerprint: string, answer: string, ttlMs: number): Promise<void> {
    this.entries.set(key, { fp: fingerprint, answer }, { ttl: ttlMs });
  }

  async release(key: string, fingerprint: string): Promise<void> {
    const e = this.entries.get(key);
    if (e && e.fp === fingerprint && e.answer === undefined) this.entries.delete(key);
  }
}

function stateOf(e: Entry, fingerprint: string): IdempotencyClaim {
  if (e.fp !== fingerprint) return { state: 'mismatch' };
  return e.answer === undefined ? { state: 'running' } : { state: 'done', answer: e.answer };
}

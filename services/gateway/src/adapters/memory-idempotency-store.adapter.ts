import { LRUCache } from 'lru-cache';
import type { IdempotencyClaim, IdempotencyStore } from '../ports/idempotency-store.port';
import { claimOf, type IdempotencyEntry } from './idempotency-entry';

/** Idempotency keys in this process, for a gateway without a Redis (one process serves every call). */
export class MemoryIdempotencyStore implements IdempotencyStore {
  // Bounded: past this many live keys the oldest go first (a retry of one of them runs again).
  private readonly entries = new LRUCache<string, IdempotencyEntry>({ max: 100_000 });

  async claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyClaim> {
    const e = this.entries.get(key);
    if (!e) {
      this.entries.set(key, { fp: fingerprint }, { ttl: ttlMs });
      return { state: 'claimed' };
    }
    return claimOf(e, fingerprint);
  }

  async complete(key: string, fingerprint: string, answer: string, ttlMs: number): Promise<void> {
    this.entries.set(key, { fp: fingerprint, answer }, { ttl: ttlMs });
  }

  async release(key: string, fingerprint: string): Promise<void> {
    const e = this.entries.get(key);
    if (e && e.fp === fingerprint && e.answer === undefined) this.entries.delete(key);
  }
}

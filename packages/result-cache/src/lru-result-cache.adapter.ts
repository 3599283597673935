import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { QuarryMetrics } from '@quarry/metrics';
import type { CacheKey, CachedResult, ResultCache } from './result-cache.port';

/**
 * What an entry costs beyond its payload: the hashed key, the record, the LRU's slots. Measured with
 * lru-cache 11 on Node 20: about 280 bytes of heap for an entry with a short payload and two counts.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * An entry's bytes as counted against the bound. V8 keeps a string in one or two bytes per UTF-16
 * unit, so counting two never under-counts, and it costs no pass over a megabyte payload; a file's
 * bytes count as they are.
 */
export function entryBytes(value: CachedResult): number {
  const payload = typeof value.payload === 'string' ? 2 * value.payload.length : value.payload.byteLength;
  return ENTRY_OVERHEAD_BYTES + payload + 2 * (value.extra?.length ?? 0) + 8 * value.counts.length;
}

/**
 * The stored key: a hash of the serialized parts, so a 10,000-character query costs no more memory
 * than a short one. JSON writes Infinity, -Infinity and NaN all as null, which would make `x:>1e999`
 * and `x:>-1e999` one entry: they are spelled out instead.
 */
export function cacheKeyOf(parts: CacheKey): string {
  const text = JSON.stringify(parts, (_key, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? { $number: String(v) } : v,
  );
  return createHash('sha256').update(text).digest('base64url');
}

/**
 * The process's result cache: an LRU bounded by bytes (QUARRY_CACHE_MB), shared by the query and
 * crosstab services hosted in one process. Size 0 turns it off.
 */
export class LruResultCache implements ResultCache {
  private readonly lru: LRUCache<string, CachedResult> | undefined;

  constructor(
    readonly maxBytes: number,
    private readonly metrics?: QuarryMetrics,
  ) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
      throw new RangeError(`maxBytes must be a whole number of bytes, got ${maxBytes}`);
    this.lru =
      maxBytes === 0
        ? undefined
        : new LRUCache<string, CachedResult>({
            maxSize: maxBytes,
            // One huge page must not flush everything else: larger results are simply not kept.
            maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)),
            sizeCalculation: entryBytes,
          });
  }

  get enabled(): boolean {
    return this.lru !== undefined;
  }

  /** Bytes held (as counted against the bound) and entries. */
  get stats(): { bytes: number; entries: number } {
    return { bytes: this.lru?.calculatedSize ?? 0, entries: this.lru?.size ?? 0 };
  }

  get(key: CacheKey): CachedResult | undefined {
    if (!this.lru) return undefined;
    const found = this.lru.get(cacheKeyOf(key));
    this.metrics?.resultCacheLookups.inc({ outcome: found ? 'hit' : 'miss' });
    return found;
  }

  set(key: CacheKey, value: CachedResult): void {
    if (!this.lru) return;
    this.lru.set(cacheKeyOf(key), value);
    // Entries leave only by eviction inside set (no TTL, no deletes), so this keeps the gauges exact.
    if (this.metrics) {
      this.metrics.resultCacheBytes.set(this.lru.calculatedSize);
      this.metrics.resultCacheEntries.set(this.lru.size);
    }
  }
}

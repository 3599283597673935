import { QuarryMetrics } from '@quarry/metrics';
import { cacheKeyOf, ENTRY_OVERHEAD_BYTES, entryBytes, LruResultCache } from './lru-result-cache.adapter';

const result = (payload: string, ...counts: number[]) => ({ payload, counts });

describe('LruResultCache', () => {
  it('keeps its byte bound under 10,000 distinct entries, evicting the oldest first', () => {
    const maxBytes = 200_000;
    const cache = new LruResultCache(maxBytes);
    let largest = 0;
    for (let i = 0; i < 10_000; i++) {
      // Payloads of 0 to ~2 KB, some of them two-byte text (counted at two bytes per unit).
      const payload = (i % 7 === 0 ? 'é' : 'x').repeat((i * 37) % 2000);
      cache.set(['query', 'movies', i], result(payload, i));
      largest = Math.max(largest, cache.stats.bytes);
      expect(cache.stats.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(largest).toBeGreaterThan(maxBytes * 0.9);
    const kept = cache.stats.entries;
    expect(kept).toBeGreaterThan(50);
    expect(kept).toBeLessThan(maxBytes / ENTRY_OVERHEAD_BYTES);
    // Exactly the newest `kept` calls are still there, each with its own payload.
    expect(cache.get(['query', 'movies', 9_999 - kept])).toBeUndefined();
    for (let i = 10_000 - kept; i < 10_000; i++) expect(cache.get(['query', 'movies', i])?.counts).toEqual([i]);
  });

  it('counts an entry by its payload, not by how long its key is', () => {
    const cache = new LruResultCache(1_000_000);
    cache.set(['query', 'x'.repeat(10_000)], result('abc', 1));
    expect(cache.stats.bytes).toBe(entryBytes(result('abc', 1)));
    expect(entryBytes(result('abc', 1))).toBe(ENTRY_OVERHEAD_BYTES + 6 + 8);
  });

  it('evicts the least recently used entry, where a read counts as a use', () => {
    const entry = result('p'.repeat(100), 0);
    const cache = new LruResultCache(4 * entryBytes(entry));
    for (const k of ['a', 'b', 'c', 'd']) cache.set([k], entry);
    expect(cache.get(['a'])).toBe(entry);
    cache.set(['e'], entry);
    expect(cache.get(['b'])).toBeUndefined();
    expect([cache.get(['a']), cache.get(['c']), cache.get(['d']), cache.get(['e'])]).toEqual([
      entry,
      entry,
      entry,
      entry,
    ]);
    cache.get(['a']);
    cache.set(['f'], entry);
    expect(cache.get(['c'])).toBeUndefined();
    expect(cache.get(['a'])).toBe(entry);
    expect(cache.stats.entries).toBe(4);
  });

  it('does not keep a result larger than a quarter of the bound, and keeps the others', () => {
    const small = result('s', 1);
    const cache = new LruResultCache(40_000);
    cache.set(['small'], small);
    cache.set(['huge'], result('h'.repeat(5_000), 1));
    expect(cache.get(['huge'])).toBeUndefined();
    expect(cache.get(['small'])).toBe(small);
    expect(cache.stats.entries).toBe(1);
  });

  it('stores nothing at size 0 and says it is off', () => {
    const cache = new LruResultCache(0);
    expect(cache.enabled).toBe(false);
    cache.set(['a'], result('x', 1));
    expect(cache.get(['a'])).toBeUndefined();
    expect(cache.stats).toEqual({ bytes: 0, entries: 0 });
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses a bound of %p', (bad) => {
    expect(() => new LruResultCache(bad)).toThrow(RangeError);
  });

  it('keeps keys apart that JSON alone would merge or that differ in one part', () => {
    const distinct = [
      ['q', { op: 'gt', value: Number.POSITIVE_INFINITY }],
      ['q', { op: 'gt', value: Number.NEGATIVE_INFINITY }],
      ['q', { op: 'gt', value: Number.NaN }],
      ['q', { op: 'gt', value: null }],
      ['q', { op: 'gt', value: 'Infinity' }],
      ['q', 'a', 'b'],
      ['q', 'a,b'],
      ['q', ['a', 'b']],
      ['q', 1],
      ['q', '1'],
    ];
    expect(new Set(distinct.map(cacheKeyOf)).size).toBe(distinct.length);
    const cache = new LruResultCache(1_000_000);
    distinct.forEach((key, i) => cache.set(key, result(String(i))));
    distinct.forEach((key, i) => expect(cache.get(key)?.payload).toBe(String(i)));
  });

  it('reports its bytes, entries and lookups in the metrics', async () => {
    const metrics = new QuarryMetrics();
    const cache = new LruResultCache(1_000_000, metrics);
    cache.set(['a'], result('xyz', 1));
    cache.get(['a']);
    cache.get(['b']);
    const text = await metrics.registry.metrics();
    expect(text).toContain(`quarry_result_cache_bytes ${entryBytes(result('xyz', 1))}`);
    expect(text).toContain('quarry_result_cache_entries 1');
    expect(text).toContain('quarry_result_cache_lookups_total{outcome="hit"} 1');
    expect(text).toContain('quarry_result_cache_lookups_total{outcome="miss"} 1');
  });
});

/** A cached engine answer: its serialized payload (text, or a file's bytes) and the few numbers that go with it. */
export interface CachedResult {
  readonly payload: string | Uint8Array;
  readonly counts: readonly number[];
  /** The rollup a crosstab was answered from, when one was (meta.servedBy). */
  readonly servedBy?: string;
  /** The engine that computed it (meta.provenance.engine). */
  readonly engine?: string;
  /** What else the answer carried, as JSON text (a search's scores and facets). */
  readonly extra?: string;
}

/**
 * The parts that decide a result: plain JSON data (strings, numbers, booleans, arrays, objects).
 * Two keys are the same entry only when their parts serialize identically, so a part left out is a
 * part the result must not depend on.
 */
export type CacheKey = readonly unknown[];

/**
 * Results of searches and crosstabs, shared by the services of one process. Adapters must guarantee:
 * - memory stays within the configured bound, each entry counted by the bytes of its strings and files;
 * - the least recently used entries go first;
 * - two different keys never share an entry;
 * - a disabled cache (size 0) stores nothing and `enabled` is false.
 */
export interface ResultCache {
  readonly enabled: boolean;
  get(key: CacheKey): CachedResult | undefined;
  set(key: CacheKey, value: CachedResult): void;
}

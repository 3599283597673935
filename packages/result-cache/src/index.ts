export type { CacheKey, CachedResult, ResultCache } from './result-cache.port';
export { LruResultCache, cacheKeyOf, entryBytes, ENTRY_OVERHEAD_BYTES } from './lru-result-cache.adapter';
export { SharedComputations } from './shared-computations';

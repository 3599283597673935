/** How the result cache answered a call of a cached method (QUERIES.EXECUTE, CROSSTAB.EXECUTE): `result.meta.cache`. */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

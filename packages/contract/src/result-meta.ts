/** How the result cache answered a call of a cached method (QUERIES.EXECUTE, CROSSTAB.EXECUTE): `result.meta.cache`. */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

/**
 * Which data gave an answer (`result.meta.provenance`): the index version it ran on, the SHA-256 of that
 * version's records file (null for versions loaded before it was kept), the engine that computed it, the
 * rollup that answered (null: the records were read) and whether it came from the result cache.
 */
export interface Provenance {
  index: string;
  version: number;
  snapshot: string | null;
  engine: string;
  servedBy: string | null;
  cached: boolean;
}

/** `verify: true` on a crosstab: how many cells were recomputed along the independent path, and how many differed. */
export interface VerifyOutcome {
  cells: number;
  mismatched: number;
}

import type { CacheStatus, Provenance, VerifyOutcome } from '@quarry/contract';

/** Where and when an execution reads: a kept earlier version (a saved report's snapshot), the time relative dates are read at. */
export interface RunAt {
  version?: number;
  /** Unix ms; absent: now. A replay passes its first run's. */
  nowMs?: number;
}

/** What one search or crosstab execution answered, and what a report saved from it records. */
export interface Execution {
  data: Record<string, unknown>;
  cache?: CacheStatus;
  /** The rollup a crosstab was answered from (meta.servedBy). */
  servedBy?: string;
  /** A crosstab's table rows, its chart's too (an image answers none of its own). */
  tableRows?: number;
  /** The index version (snapshot) it ran on. */
  indexVersion: number;
  index: string;
  /** The executable params with their defaults filled in (without saveReport and cache). */
  executable: Record<string, unknown>;
  /** Which data gave the answer (meta.provenance). */
  provenance: Provenance;
  /** The time relative dates were read at (Unix ms): what a replay reads them at. */
  nowMs: number;
  /** With verify: true (CROSSTAB.EXECUTE). */
  verify?: VerifyOutcome;
}

/** meta.provenance from what the service said of the version and engine that answered. */
export function provenanceOf(
  index: string,
  ran: { indexVersion: number; snapshot: string; engine: string; cache?: CacheStatus; servedBy?: string },
): Provenance {
  return {
    index,
    version: ran.indexVersion,
    snapshot: ran.snapshot === '' ? null : ran.snapshot,
    engine: ran.engine,
    servedBy: ran.servedBy ?? null,
    cached: ran.cache === 'hit',
  };
}

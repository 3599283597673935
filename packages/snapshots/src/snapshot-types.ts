import type { SampleFacts } from './attachable-snapshot';
import type { BuiltRollup } from './rollup-tables';
import type { SingleWordFields } from './single-word-fields';

/** What the engine needs of a catalog entry to find and cache a snapshot. */
export interface SnapshotRef {
  name: string;
  version: number;
  snapshot: string;
  fields: ReadonlyArray<{ name: string; type: string }>;
}

export interface LoadedTable {
  table: string;
  /**
   * The stored table behind the `table` view, as SQL: a sample (TABLESAMPLE ... (system)) must name
   * it, since through the view DuckDB filtered every record before sampling (220 ms instead of 3 ms at 30M).
   */
  stored: string;
  /** DuckDB column types by field name (DATE vs TIMESTAMP matters for output). */
  columnTypes: ReadonlyMap<string, string>;
  /** Text fields whose values are single words: there a word match is an equality (compileWhere). */
  singleWord: SingleWordFields;
  /**
   * Keys per field on a crosstab axis, learnt at load (attached versions only): what a crosstab of
   * every record needs at least, known without a scan.
   */
  distinctKeys?: ReadonlyMap<string, number>;
  /**
   * The version's sample of records (attached versions written with one; SampleFacts): the
   * rows of `table` where `firstLevel` holds are a uniform sample of `first` records, all its rows one
   * of `records`.
   */
  sample?: SampleFacts & { table: string; firstLevel: string };
  /** The rollups built into the version's DuckDB file, each table named as SQL (attached versions only). */
  rollups?: ReadonlyArray<BuiltRollup & { stored: string }>;
  /** The stored term counts (attached versions written since ranking), as SQL names. */
  storedTerms?: { terms: string; stats: string };
  /** attached: the version's DuckDB file, read-only; memory: read into this process. */
  storage: 'attached' | 'memory';
  /** Memory the version holds in this process (read-in versions; 0 when attached). */
  heldBytes: number;
}

export interface SnapshotEngineOptions {
  threads?: number;
  /** DuckDB's memory limit (bytes); past it joins, aggregates and sorts spill to `tempDirectory`. */
  memoryLimitBytes?: number;
  /**
   * Where DuckDB spills: a writable folder on the data volume (the working directory, DuckDB's
   * default, is read-only in every Deployment). '' turns spilling off.
   */
  tempDirectory?: string;
  /** DuckDB's max_temp_directory_size (bytes); a call that would spill more fails instead. */
  maxTempBytes?: number | undefined;
  /**
   * Bytes the versions read into memory may hold together (attached ones count nothing: their blocks
   * are DuckDB's cache, within its memory limit); the least recently used go first. Unset: no bound.
   */
  indexBudgetBytes?: number;
  /**
   * Read each attached version's sample of records into DuckDB's buffer when it opens (a small, bounded
   * cost): the cell-limit estimate then never waits for a first read of its pages. For the
   * processes that run crosstabs; a search never reads the sample.
   */
  warmSamples?: boolean;
}

export type Row = Record<string, unknown>;

import type { IndexEntry } from '@quarry/metadata-store';
import type { FieldDef, QueryNode } from '@quarry/query-language';

export interface SortKey {
  field: string;
  type: FieldDef['type'];
  direction: 'asc' | 'desc';
}

export interface SearchPlan {
  where: QueryNode;
  /** Applied in order; ties fall back to the index's record order. */
  sort: SortKey[];
  offset: number;
  limit: number;
  /** Aborts when the caller's deadline passes: the engine stops the search and rejects with a 504. */
  signal?: AbortSignal;
}

export interface SearchPage {
  total: number;
  /** The page's records as a JSON array, fields in catalog order, dates as ISO strings. */
  recordsJson: string;
  /** Which engine answered (meta.provenance.engine): `duckdb` (a version held in memory too) or `typesense`. */
  engine: string;
}

/**
 * A search engine over published index versions. Every adapter must guarantee, for the same snapshot
 * and plan, the same total and the same records in the same order (the conformance suite checks):
 * - text matching is by whole words (runs of letters and digits), case-insensitive;
 * - text sorts compare lower-cased values; missing values sort last in both directions;
 * - ties and the unsorted order follow the record order of the source file.
 */
export interface SearchIndex {
  /** Makes a built snapshot searchable before the catalog publishes it. */
  prepare(entry: IndexEntry): Promise<void>;
  search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage>;
  /**
   * After a publish: releases what older versions held (their snapshot files are the loader's), but for
   * the previous one and those saved reports still run on (`kept`, asOf "saved").
   */
  retire(current: IndexEntry, previous: IndexEntry | null, kept?: readonly IndexEntry[]): Promise<void>;
  drop(entry: IndexEntry): Promise<void>;
  /** Releases what this process holds for an index that is no longer published (it was dropped). */
  forget(name: string): void;
  close(): Promise<void>;
}

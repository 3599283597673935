import type { IndexEntry } from '@quarry/metadata-store';
import type { FieldDef, QueryNode } from '@quarry/query-language';

/** A field, or (type `score`, field `_score`) the record's relevance score. */
export interface SortKey {
  field: string;
  type: FieldDef['type'] | 'score';
  direction: 'asc' | 'desc';
}

/** `facets` of QUERIES.EXECUTE: a field's values over every match, with the records holding each. */
export interface FacetRequest {
  field: string;
  type: FieldDef['type'];
  limit: number;
}

export interface FacetCounts {
  field: string;
  /** The most frequent values first, then by value; text as stored, blank as `(blank)`. */
  values: Array<{ value: string | number | boolean; count: number }>;
  /** Matching records whose value is not among `values`. */
  others: number;
}

export interface SearchPlan {
  /** The query with the caller's realms; fuzzy words still unresolved (the engine resolves them). */
  where: QueryNode;
  /**
   * The caller's own query (no realms): present when the page carries scores (relevance.ts), which it
   * then adds up over the version's counts. A `score` sort key orders by them.
   */
  score?: QueryNode;
  /** Applied in order; ties fall back to the index's record order. */
  sort: SortKey[];
  facets?: FacetRequest[];
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
  /** One per record of the page, when the plan asked for scores. */
  scores?: number[];
  /** The plan's `score` query with its fuzzy words resolved: what highlights mark. */
  resolved?: QueryNode;
  facets?: FacetCounts[];
}

/**
 * A search engine over published index versions. Every adapter must guarantee, for the same snapshot
 * and plan, the same total and the same records in the same order (the conformance suite checks):
 * - text matching is by whole words (runs of letters and digits), case-insensitive;
 * - text sorts compare lower-cased values; missing values sort last in both directions;
 * - ties and the unsorted order follow the record order of the source file;
 * - scores are BM25 over the version's own counts (relevance.ts), fuzzy words expanded from its
 *   vocabulary; facets count every matching record (Typesense: its own text match, docs/search.md).
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

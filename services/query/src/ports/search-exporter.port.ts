import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { SortKey } from './search-index.port';

export type SearchExportFormat = 'csv' | 'jsonl' | 'parquet';

export interface SearchExportPlan {
  where: QueryNode;
  /** The caller's query when the search ranks (a `score` sort key orders by it), as SearchPlan.score. */
  score?: QueryNode;
  sort: SortKey[];
  format: SearchExportFormat;
  /** The file to write: the caller chose it and owns it. */
  path: string;
  signal?: AbortSignal;
}

/**
 * Writes every record a search matches to a file, in the search's order (a ranked one best first, with
 * the scores SearchIndex.search gives), without holding them: the
 * engine streams them to disk. Every adapter must write the same records as SearchIndex.search would
 * page through, fields in catalog order; a CSV's text cells that a spreadsheet would run as a formula
 * are quoted with a leading apostrophe.
 */
export interface SearchExporter {
  count(entry: IndexEntry, where: QueryNode, signal?: AbortSignal): Promise<number>;
  /** Resolves with the number of records written. */
  write(entry: IndexEntry, plan: SearchExportPlan): Promise<number>;
}

import type { IndexEntry, IndexOrigin } from '@quarry/metadata-store';

export type LoadMode = 'replace' | 'append' | 'upsert';
export type SourceFormat = 'csv' | 'json' | 'jsonl' | 'parquet';
/** The loader's declared types (`quarry index load --type`). */
export type DeclaredType = 'string' | 'integer' | 'number' | 'boolean' | 'date';

/** How a source's rows are loaded, as `quarry index load` takes it. */
export interface SourceLoadOptions {
  types?: Record<string, DeclaredType>;
  views?: Array<{ name: string; field: string }>;
  onError: 'fail' | 'skip';
  maxErrors?: number;
}

/** One rejected row as the answer lists it: where, which column when known, why. */
export interface RejectedRowView {
  line?: number;
  record?: number;
  column?: string;
  reason: string;
}

export interface IndexLoadRequest {
  index: string;
  file: string;
  format: SourceFormat;
  /** The file's name in messages ("the upload"). */
  label: string;
  mode: LoadMode;
  key?: string;
  onError: 'fail' | 'skip';
  maxErrors?: number;
  /** Declared types over what the file says; none: inferred, never changing a value. */
  types?: Record<string, DeclaredType>;
  /** Dynamic views; none: an append or upsert keeps the index's. */
  views?: Array<{ name: string; field: string }>;
  /** Who creates the index when this load does. */
  owner: string;
  /** A source run's load: published with the version, in the same write. */
  origin?: IndexOrigin;
  /** Asked under the index's load lock with the published entry (null: none): throws to refuse. */
  authorize: (current: IndexEntry | null) => void;
  /** Aborted when the caller went away: the load publishes nothing. */
  signal: AbortSignal;
}

/** How far a load got: complete when it published, partial (rowsRead unknown) when it stopped early. */
export interface LoadProgress {
  rowsRead?: number;
  rejected: number;
  rejects: RejectedRowView[];
}

export interface IndexLoaded extends LoadProgress {
  entry: IndexEntry;
  rowsRead: number;
  replaced: number;
}

/**
 * Loads a file into an index and publishes one version, or nothing. Adapters guarantee: one load per
 * index at a time (the catalog's load lock, across processes); `authorize` is asked under that lock;
 * the previous version keeps serving until the publish, and after any failure; `progress` holds what
 * the load had counted when it failed.
 */
export interface IndexLoader {
  load(req: IndexLoadRequest, progress: LoadProgress): Promise<IndexLoaded>;
}

/** A published index version, as the catalog records it. */
export interface IndexEntry {
  name: string;
  description: string;
  fields: Array<{ name: string; type: string; grain?: string }>;
  /** Dynamic views: a name and the field whose distinct values it counts ("Records" is implicit). */
  views: Array<{ name: string; field: string }>;
  recordCount: number;
  /** Increases at every publish of this name and never repeats, not even after a drop. */
  version: number;
  /** The snapshot file of this version, relative to the data directory. */
  snapshot: string;
  /**
   * The SHA-256 (hex) of the snapshot file, computed when it was written (meta.provenance.snapshot);
   * absent for versions written before it was kept.
   */
  sha256?: string;
  updatedAt: string;
  /** Rollups kept for this index, each built inside this version's DuckDB file (see RollupDef). */
  rollups?: RollupDef[];
  /** The user who created the index through the API; absent for indexes loaded by the CLI. */
  owner?: string;
  /** The source run that published this version; absent for uploads and the CLI. */
  origin?: IndexOrigin;
}

/**
 * What published a version when a source run did, kept with the version in the same write: a run retaken
 * after its worker died sees its publish happened, and an append's cursor survives a crash between the
 * publish and any other write.
 */
export interface IndexOrigin {
  sourceId: string;
  runId: string;
  /** append with cursor: the largest cursor value this version holds, and what it is a value of. */
  cursor?: { value: string; of: string };
}

/** What a rollup totals: a Count of records, or an aggregation of one field. */
export interface RollupTotal {
  kind: 'count' | 'sum' | 'countDistinct' | 'min' | 'max' | 'average';
  field?: string;
}

/**
 * A rollup: the records pre-aggregated by some fields (a date at a grain), built at every load inside
 * the version's DuckDB file, from which the crosstabs it covers are answered instead of a scan.
 */
export interface RollupDef {
  name: string;
  rows: string[];
  columns: Array<{ field: string; grain?: string }>;
  totals: RollupTotal[];
}

export type IndexPublication = Omit<IndexEntry, 'version' | 'updatedAt'>;

/** Who holds the load lock of an index: enough to tell a live holder from a crashed one. */
export interface LoadLockHolder {
  /** Unique per load (a UUID): renew and release act only on the holder's own lock. */
  id: string;
  host: string;
  pid: number;
}

/** The right to build, publish, prune or drop one index name until released or the lease runs out. */
export interface LoadLock {
  /** Extends the lease; rejects with CONFLICT when the lock was lost (it expired and was taken over). */
  renew(): Promise<void>;
  /** Gives the lock up; a lock already lost is left to its new holder. */
  release(): Promise<void>;
}

/**
 * The index catalog. Every adapter must guarantee:
 * - publish is atomic: a reader sees the previous entry or the new one, never a mix, and two
 *   concurrent publishes of one name get distinct, increasing versions, in one store operation
 *   (never a read-back that a concurrent publisher could change);
 * - versions of a name never repeat: a drop keeps the name's last version (a tombstone), so a
 *   reload after a drop publishes a higher one and no cache keyed by version can serve dropped rows;
 * - get/list reflect a publish or drop made by any process at once, and never show a dropped index;
 * - drop of an unknown or already dropped name rejects with AppError NOT_FOUND;
 * - every published version stays readable through getIndexVersion (saved reports run on it with asOf
 *   "saved") until releaseIndexVersions names it or the index is dropped; listIndexVersions lists the
 *   ones not released, oldest first (the current one included);
 * - list is ordered by name;
 * - the owner is the publication's (a publish without one clears it), on the live entry only;
 * - the origin is the publication's (a publish without one clears it), on the live entry and its version;
 * - at most one live load lock per name: acquiring a held lock rejects with AppError CONFLICT
 *   naming the holder, unless its lease has run out or (same host) its process is gone, in which
 *   case the lock is taken over, so a crashed load never blocks the next one.
 */
export interface IndexCatalog {
  publishIndex(entry: IndexPublication): Promise<{ entry: IndexEntry; previous: IndexEntry | null }>;
  getIndex(name: string): Promise<IndexEntry | null>;
  listIndexes(): Promise<IndexEntry[]>;
  dropIndex(name: string): Promise<IndexEntry>;
  /** A published version of a live index, while not released; null otherwise. */
  getIndexVersion(name: string, version: number): Promise<IndexEntry | null>;
  listIndexVersions(name: string): Promise<IndexEntry[]>;
  /** Forgets versions whose snapshot files are about to be deleted. */
  releaseIndexVersions(name: string, versions: readonly number[]): Promise<void>;
  acquireLoadLock(name: string, holder: LoadLockHolder, leaseMs: number): Promise<LoadLock>;
  /** The names of the live indexes this user owns (created through the API), ordered by name. */
  ownedIndexes(userId: string): Promise<string[]>;
}

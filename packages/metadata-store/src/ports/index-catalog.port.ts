/** A published index version, as the catalog records it. */
export interface IndexEntry {
  name: string;
  description: string;
  fields: Array<{ name: string; type: string; grain?: string }>;
  /** Dynamic views: a name and the field whose distinct values it counts ("Records" is implicit). */
  views: Array<{ name: string; field: string }>;
  recordCount: number;
  /** Increases by one at every publish of this name. */
  version: number;
  /** The snapshot file of this version, relative to the data directory. */
  snapshot: string;
  updatedAt: string;
}

export type IndexPublication = Omit<IndexEntry, 'version' | 'updatedAt'>;

/**
 * The index catalog. Every adapter must guarantee:
 * - publish is atomic: a reader sees the previous entry or the new one, never a mix, and two
 *   concurrent publishes of one name get distinct, increasing versions;
 * - get/list reflect a publish or drop made by any process at once;
 * - drop of an unknown name rejects with AppError NOT_FOUND;
 * - list is ordered by name.
 */
export interface IndexCatalog {
  publishIndex(entry: IndexPublication): Promise<{ entry: IndexEntry; previous: IndexEntry | null }>;
  getIndex(name: string): Promise<IndexEntry | null>;
  listIndexes(): Promise<IndexEntry[]>;
  dropIndex(name: string): Promise<IndexEntry>;
}

import type { FieldDef, DateGrain, FieldType } from '@quarry/query-language';

export interface SnapshotBuildInput {
  name: string;
  file: string;
  types: Record<string, FieldType>;
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  onProgress?: (fraction: number) => void;
}

export interface BuiltSnapshotInfo {
  fields: FieldDef[];
  recordCount: number;
  /** Where the snapshot lives, as the catalog records it (relative to the data directory). */
  snapshot: string;
}

/**
 * Turns a source file into an immutable snapshot of an index. Adapters must guarantee: a build never
 * overwrites a published snapshot (each build writes a new file, visible only once complete); a failed
 * build leaves nothing a reader could open; `prune` deletes only files of that name not in `keep`, and
 * is called only by the holder of the name's load lock.
 */
export interface SnapshotBuilder {
  build(input: SnapshotBuildInput): Promise<BuiltSnapshotInfo>;
  prune(name: string, keep: readonly string[]): void;
}

import type { RollupDef } from '@quarry/metadata-store';
import type { FieldDef, DateGrain, FieldType } from '@quarry/query-language';

/** How a load reads its source: every option of `quarry index load` that shapes the rows. */
export interface SourceOptions {
  /** csv, json, jsonl or parquet when the file name does not tell (standard input). */
  format?: 'csv' | 'json' | 'jsonl' | 'parquet';
  /** The source's name in messages. */
  label?: string;
  /** `fail` (default): a malformed row fails the load; `skip`: it is listed in the rejects file. */
  onError?: 'fail' | 'skip';
  /** With `skip`: more rejected rows than this fail the load. */
  maxErrors?: number;
  encoding?: 'utf-8' | 'latin1';
  dateFormat?: string;
}

/** One row a load rejected: its `line` in a file with lines, else its `record` (from 1); the column when known. */
export interface RejectedRowInfo {
  line?: number;
  record?: number;
  column?: string;
  reason: string;
  text: string;
}

/**
 * A load's accounting, filled in place as the build goes (so a caller still has it when the build
 * throws): rows read once known, every rejected row counted, the first 100 listed (text clipped).
 */
export interface LoadReport {
  rowsRead?: number;
  rejected: number;
  rejects: RejectedRowInfo[];
}

export interface SnapshotBuildInput extends SourceOptions {
  name: string;
  file: string;
  types: Record<string, FieldType>;
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  /** Where rejected rows go with `skip`. */
  rejectsFile?: string;
  /** Append to this published version (same fields). */
  append?: { snapshot: string; fields: FieldDef[] };
  /**
   * With `append`, the rows whose `key` value the file has are replaced (the file's come after the
   * others); alone, a first load. An empty or repeated key in the file is a rejected row.
   */
  upsert?: { key: string };
  report?: LoadReport;
  onProgress?: (fraction: number) => void;
  /** Rollups to build with the version; one reading a field the version lacks is dropped (droppedRollups). */
  rollups?: RollupDef[];
}

export interface BuiltSnapshotInfo {
  fields: FieldDef[];
  recordCount: number;
  /** Where the snapshot lives, as the catalog records it (relative to the data directory). */
  snapshot: string;
  /** The SHA-256 (hex) of the snapshot file, read as it was written (meta.provenance.snapshot). */
  sha256: string;
  /** Rows read from the source: those loaded plus those rejected. */
  rowsRead: number;
  rowsRejected: number;
  /** The first 100 rejected rows, when any were. */
  rejects?: RejectedRowInfo[];
  /** With `upsert`: the previous version's rows replaced by the file's. */
  replaced?: number;
  rejectsFile?: string;
  /** Lines of a CSV inside an unterminated quote: neither read as rows nor checked. */
  unreadLines?: number;
  /**
   * Columns loaded as text although most values read as another type: the first value that did not, at
   * its `line` in a CSV or JSON Lines file, else by its `record` (from 1).
   */
  typeNotes?: Array<{ column: string; wanted: FieldDef['type']; line?: number; record?: number; value: string }>;
  /** The rollups built. */
  rollups?: RollupDef[];
  /** Rollups not built: a field they read is gone (or no longer a number). */
  droppedRollups?: Array<{ name: string; missing: string[] }>;
}

/**
 * Turns a source file into an immutable snapshot of an index. Adapters must guarantee: every source row
 * is either loaded or rejected (rowsRead = loaded + rejected), a strict build (the default) fails on the
 * first malformed row and a build never changes a value's type silently; a build never
 * overwrites a published snapshot (each build writes a new file, visible only once complete); a failed
 * build leaves nothing a reader could open; `prune` deletes only files of that name not in `keep`, and
 * is called only by the holder of the name's load lock.
 */
export interface SnapshotBuilder {
  build(input: SnapshotBuildInput): Promise<BuiltSnapshotInfo>;
  /** Where a load's rejected rows are kept for version `version` of `name`. */
  rejectsFile(name: string, version: number): string;
  prune(name: string, keep: readonly string[]): void;
  /** Bytes of a snapshot file (relative to the data directory); 0 when it is gone. */
  sizeOf(snapshot: string): number;
  /** A published snapshot's records under a new snapshot with exactly `rollups` built; returns it. */
  withRollups(snapshot: string, fields: FieldDef[], rollups: RollupDef[]): Promise<string>;
}

/**
 * Which earlier versions of an index saved reports still run on (asOf "saved"), and how many bytes of
 * them a deployment keeps (QUARRY_SNAPSHOT_KEEP_MB).
 */
export interface SnapshotRetention {
  referencedVersions(index: string): Promise<number[]>;
  keepBytes: number;
}

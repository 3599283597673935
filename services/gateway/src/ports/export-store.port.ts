import type { ExportFormat, ExportMethod, ExportState } from '@quarry/contract';

/** One export as the store keeps it, readable by any gateway that shares the store. */
export interface ExportRecord {
  id: string;
  userId: string;
  method: ExportMethod;
  format: ExportFormat;
  state: ExportState;
  rowsWritten: number;
  bytes: number;
  error?: string;
  createdAt: string;
  /** Set when done: the file is deleted after it. */
  expiresAt?: string;
}

/** What a file being written holds so far. */
export interface WrittenSoFar {
  bytes: number;
  /** Whole records so far; undefined where the file cannot tell (a workbook, a Parquet file's columns unknown). */
  rows: number | undefined;
}

/** Reads a file being written, from where it last stopped: each call costs only what was added since. */
export interface PartialFileWatch {
  /** How far the file got; `signal` (the run ended) stops a read that is catching up, with what it has. */
  read(signal?: AbortSignal): Promise<WrittenSoFar>;
}

/**
 * Where exports' records and files live. Ids reaching it are the server's own (the use cases check their
 * form first); files are readable by this process's user only. A run writes its own partial file, which no
 * download ever reads; only `publish` puts a finished one where downloads find it.
 */
export interface ExportStore {
  create(record: ExportRecord): Promise<void>;
  get(id: string): Promise<ExportRecord | undefined>;
  update(id: string, patch: Partial<ExportRecord>): Promise<ExportRecord>;
  list(): Promise<ExportRecord[]>;
  /** The partial file of one run (`run`: hex) for a writer (an engine) to create; the folder exists. */
  partialPath(id: string, run: string): string;
  /** Removes one run's partial file (a staged file the finished one was made from). */
  discardPartial(id: string, run: string): Promise<void>;
  /** Writes a run's partial file from these pieces, in order (an answer already bounded in size). */
  writePartial(id: string, run: string, pieces: Iterable<string | Uint8Array>): Promise<void>;
  /** `columns`: a Parquet file's, whose rows are counted from the values its pages hold. */
  watch(id: string, run: string, format: ExportFormat, columns?: number): PartialFileWatch;
  /** Moves a run's finished file where downloads read it, this process's user's alone; resolves with its size. */
  publish(id: string, run: string, format: ExportFormat): Promise<number>;
  /** Free space on the exports' volume. */
  freeBytes(): Promise<number>;
  openFile(id: string, format: ExportFormat): NodeJS.ReadableStream;
  /** Removes the export's file and every partial one; the record too with `record`. */
  remove(id: string, format: ExportFormat, record: boolean): Promise<void>;
}

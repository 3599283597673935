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
  /** The process running it (`host:pid`): a restart finds the exports it left unfinished by it. */
  owner: string;
}

/**
 * Where exports' records and files live. Ids reaching it are the server's own (the use cases check their
 * form first); files are readable by this process's user only.
 */
export interface ExportStore {
  create(record: ExportRecord): Promise<void>;
  get(id: string): Promise<ExportRecord | undefined>;
  update(id: string, patch: Partial<ExportRecord>): Promise<ExportRecord>;
  list(): Promise<ExportRecord[]>;
  /** The file's path, for a writer (an engine) to create; the store makes sure its folder exists. */
  filePath(id: string, format: ExportFormat): string;
  fileSize(id: string, format: ExportFormat): Promise<number>;
  /** Writes the file from these pieces, in order (an answer already bounded in size: a crosstab's). */
  writeFile(id: string, format: ExportFormat, pieces: Iterable<string | Uint8Array>): Promise<void>;
  /** Restricts the written file to this process's user. */
  seal(id: string, format: ExportFormat): Promise<void>;
  openFile(id: string, format: ExportFormat): NodeJS.ReadableStream;
  /** Removes the file (a partial one included); the record too with `record`. */
  remove(id: string, format: ExportFormat, record: boolean): Promise<void>;
}

/**
 * Files a scheduled delivery writes: a search's records (written by the query service's engine at the
 * path given), a conversion of them, or an output too large to attach, kept for its signed link. Ids are
 * the store's own (random); every method refuses an id or extension of another form as unknown.
 */
export interface DeliveryFiles {
  /** A new file's id and the absolute path a writer creates it at, for `ext` (csv, xlsx, …). */
  reserve(ext: string): { id: string; path: string };
  /** The path of a reserved or written file. */
  pathOf(id: string, ext: string): string;
  size(id: string, ext: string): Promise<number>;
  /** The whole file: only for one already known to be small (under the attachment bound). */
  read(id: string, ext: string): Promise<Buffer>;
  write(id: string, ext: string, content: Buffer): Promise<void>;
  /** The file to stream, or undefined when it is not (or no longer) there. */
  open(id: string, ext: string): Promise<{ bytes: number; stream: NodeJS.ReadableStream } | undefined>;
  remove(id: string, ext: string): Promise<void>;
  /** Deletes the files written longer than `ms` ago (their links have expired). */
  sweep(ms: number): Promise<void>;
}

export interface XlsxOptions {
  /** Hears how many records have been written, as it goes. */
  rows?: (written: number) => void;
  /** Stops the conversion before its next row: it rejects with the signal's reason, its file removed. */
  signal?: AbortSignal;
}

/** Turns the JSON Lines a search export wrote into the other files a delivery can carry. */
export interface RecordFileConverter {
  /**
   * An .xlsx workbook: a header row of `fields`, a row per record, a new sheet every 1,048,575 records.
   * Whatever ends it early (an abort, a write that failed) leaves no workbook behind.
   */
  toXlsx(
    jsonlPath: string,
    xlsxPath: string,
    fields: readonly string[],
    sheetName: string,
    options?: XlsxOptions,
  ): Promise<void>;
  /** One JSON array of the records, written as it is read. */
  toJsonArray(jsonlPath: string, jsonPath: string): Promise<void>;
}

/** Where a source's rows come from: a database (as its driver connects) or a file at a URL. */
export type SourceConnection =
  { url: string } | { host: string; port?: number; database: string; user: string; password?: string; ssl?: boolean };

export type SourceKind = 'postgres' | 'mysql' | 'sqlite' | 'url';

export interface SourceSpec {
  kind: SourceKind;
  connection: SourceConnection;
  /** SQL the database runs (read-only use is the source owner's business); or `table`. */
  query?: string;
  table?: string;
}

/** A column as the database typed it, and the loader's type it maps to exactly (none: the loader infers). */
export interface SourceColumn {
  name: string;
  /** The database's own type name (`numeric(38,10)`, `timestamptz`, `BIGINT UNSIGNED`…), for messages. */
  dbType: string;
  /** integer, number, boolean, date, timestamp or string; absent where inference keeps every digit (numeric, bigint). */
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'date' | 'timestamp';
}

export interface SourceRead {
  /** The staged file the loader reads (CSV with a header, values written exactly as the database holds them). */
  file: string;
  format: 'csv' | 'json' | 'jsonl' | 'parquet';
  rows: number;
  columns: SourceColumn[];
  /** With a cursor: the largest cursor value read (text, as the database prints it), or absent when no row. */
  cursorMax?: string;
}

/**
 * Reads a source's rows into a staged file, streamed (rows are never all held in memory). Adapters
 * guarantee: the cursor bound is passed as a bound parameter, never pasted into SQL; values are written
 * exactly (numeric keeps its digits, bigint past 2^53 stays exact, timestamptz is written as an instant in
 * UTC, date as a calendar date, json as its text); a wrong password, an unreachable host, a failing query,
 * a connection dropped mid-read or an aborted `signal` reject with an AppError saying which (never the
 * password), and leave no staged file.
 */
export interface SourceReader {
  read(
    spec: SourceSpec,
    options: {
      /** Where to write: the adapter creates this file (mode 0600). */
      file: string;
      /** Rows whose cursor column is past `after` only (after absent: every row); rows with a null cursor are left out. */
      cursor?: { column: string; after?: string };
      signal: AbortSignal;
    },
  ): Promise<SourceRead>;
}

/**
 * Every kind's reader behind one door. `admit` says whether this server may read the spec at all (the
 * host policy of QUARRY_SOURCE_ALLOW, the folders of QUARRY_SOURCE_FILE_DIRS) without connecting, and
 * rejects with an AppError saying why; `read` checks the same again before it connects.
 */
export interface SourceReaders extends SourceReader {
  admit(spec: Pick<SourceSpec, 'kind' | 'connection'>): Promise<void>;
}

import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { ident, literal, wordsColumn, wordsExpr } from './sql';

/** What the engine needs of a catalog entry to find and cache a snapshot. */
export interface SnapshotRef {
  name: string;
  version: number;
  snapshot: string;
  fields: ReadonlyArray<{ name: string; type: string }>;
}

export interface LoadedTable {
  table: string;
  /** DuckDB column types by field name (DATE vs TIMESTAMP matters for output). */
  columnTypes: ReadonlyMap<string, string>;
}

export type Row = Record<string, unknown>;

/**
 * One in-process DuckDB holding the published snapshots that this process has been asked about,
 * loaded from their Parquet files on first use and replaced when a newer version is published.
 * Query and crosstab share it when they run in one process; several processes each hold their own
 * copy of the same immutable files.
 */
export class SnapshotEngine {
  private instance: Promise<DuckDBInstance> | undefined;
  private readonly tables = new Map<string, Promise<LoadedTable>>();
  private readonly current = new Map<string, { version: number; table: Promise<LoadedTable> }>();

  constructor(
    private readonly dataDir: string,
    private readonly options: { threads?: number } = {},
  ) {}

  private db(): Promise<DuckDBInstance> {
    this.instance ??= DuckDBInstance.create(':memory:', {
      threads: String(this.options.threads ?? 2),
      preserve_insertion_order: 'true',
    });
    return this.instance;
  }

  /** The in-memory table of this snapshot version, loading it once. */
  table(ref: SnapshotRef): Promise<LoadedTable> {
    const key = `${ref.name}@${ref.version}`;
    let loaded = this.tables.get(key);
    if (!loaded) {
      loaded = this.load(ref);
      this.tables.set(key, loaded);
      loaded.catch(() => this.tables.delete(key));
      const previous = this.current.get(ref.name);
      if (!previous || previous.version < ref.version) {
        this.current.set(ref.name, { version: ref.version, table: loaded });
        if (previous) void this.retire(`${ref.name}@${previous.version}`, previous.table, loaded);
      }
    }
    return loaded;
  }

  private async load(ref: SnapshotRef): Promise<LoadedTable> {
    const table = `snap_${ref.name.replace(/[^A-Za-z0-9_]/g, '_')}_${ref.version}_${Math.random().toString(36).slice(2, 8)}`;
    const file = path.resolve(this.dataDir, ref.snapshot);
    // Each text field gets its words column here, once per loaded version (see wordsColumn).
    const words = ref.fields.filter((f) => f.type === 'string').map((f) => `, ${wordsExpr(ident(f.name))} AS ${wordsColumn(f.name)}`);
    await this.withConnection(async (c) => {
      // The file's own row numbers are the record order (snapshots keep the source's order).
      await c.run(
        `CREATE TABLE ${ident(table)} AS SELECT file_row_number AS __rowid, * EXCLUDE (file_row_number)${words.join('')} FROM read_parquet(${literal(file)}, file_row_number = true)`,
      );
    }).catch((err: unknown) => {
      throw AppError.unavailable(`The snapshot of index "${ref.name}" (version ${ref.version}) cannot be read`, err);
    });
    const described = await this.all(`DESCRIBE ${ident(table)}`);
    const columnTypes = new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
    return { table, columnTypes };
  }

  /** Drops a superseded version once the new one is loaded; queries already running keep their snapshot. */
  private async retire(key: string, old: Promise<LoadedTable>, replacement: Promise<LoadedTable>): Promise<void> {
    try {
      await replacement;
      const { table } = await old;
      this.tables.delete(key);
      await this.withConnection((c) => c.run(`DROP TABLE IF EXISTS ${ident(table)}`).then(() => undefined));
    } catch {
      // A failed load leaves the old table serving; nothing to retire.
    }
  }

  async withConnection<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await (await this.db()).connect();
    try {
      return await fn(connection);
    } finally {
      connection.closeSync();
    }
  }

  /** Runs one statement with bound parameters and returns plain JS rows. */
  async all(sql: string, params?: Record<string, DuckDBValue>): Promise<Row[]> {
    return this.withConnection(async (c) => (await c.runAndReadAll(sql, params)).getRowObjectsJS() as Row[]);
  }

  async close(): Promise<void> {
    if (this.instance) (await this.instance).closeSync();
    this.instance = undefined;
    this.tables.clear();
    this.current.clear();
  }
}

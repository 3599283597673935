import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  DuckDBInstance,
  JSDuckDBValueConverter,
  type DuckDBConnection,
  type DuckDBMaterializedResult,
  type DuckDBValue,
} from '@duckdb/node-api';
import { AppError, abortReason } from '@quarry/errors';
import { ConnectionPool } from './connection-pool';
import { learnSingleWordFields, type SingleWordFields } from './single-word-fields';
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
  /** Text fields whose values are single words: there a word match is an equality (compileWhere). */
  singleWord: SingleWordFields;
}

export type Row = Record<string, unknown>;

interface CachedTable {
  name: string;
  version: number;
  table: Promise<LoadedTable>;
}

/**
 * One in-process DuckDB holding the published snapshots that this process has been asked about,
 * loaded from their Parquet files on first use. Tables are keyed by the snapshot file, which is unique
 * per load: a drop followed by a reload of the same name can never be answered from the dropped copy.
 * Query and crosstab share it when they run in one process; several processes each hold their own
 * copy of the same immutable files.
 */
export class SnapshotEngine {
  private instance: Promise<DuckDBInstance> | undefined;
  private readonly tables = new Map<string, CachedTable>();
  /** Queries borrow long-lived connections with their prepared statements; loads and drops use their own. */
  private readonly pool: ConnectionPool;

  constructor(
    private readonly dataDir: string,
    private readonly options: { threads?: number } = {},
  ) {
    // As many idle connections as calls that run at once in practice (heavy calls are capped at 4).
    this.pool = new ConnectionPool(() => this.db(), 8);
  }

  private db(): Promise<DuckDBInstance> {
    this.instance ??= DuckDBInstance.create(':memory:', {
      threads: String(this.options.threads ?? 2),
      preserve_insertion_order: 'true',
    });
    return this.instance;
  }

  /** The in-memory table of this snapshot, loading it once. */
  table(ref: SnapshotRef): Promise<LoadedTable> {
    const cached = this.tables.get(ref.snapshot);
    if (cached) return cached.table;
    const loaded = this.load(ref);
    this.tables.set(ref.snapshot, { name: ref.name, version: ref.version, table: loaded });
    loaded.then(
      () => this.retireOlder(ref),
      () => this.tables.delete(ref.snapshot),
    );
    return loaded;
  }

  /** Forgets every loaded snapshot of an index (it was dropped): memory goes back at once. */
  release(name: string): void {
    for (const [key, cached] of this.tables) {
      if (cached.name === name) this.drop(key, cached);
    }
  }

  private async load(ref: SnapshotRef): Promise<LoadedTable> {
    const table = `snap_${ref.name.replace(/[^A-Za-z0-9_]/g, '_')}_${ref.version}_${Math.random().toString(36).slice(2, 8)}`;
    const file = path.resolve(this.dataDir, ref.snapshot);
    // Each text field gets its words column here, once per loaded version (see wordsColumn).
    const words = ref.fields
      .filter((f) => f.type === 'string')
      .map((f) => `, ${wordsExpr(ident(f.name))} AS ${wordsColumn(f.name)}`);
    // Each snapshot lives in its own compressed in-memory database: dictionary, bit-packed and run-length
    // columns made filtered scans and groupings 2-3x faster than plain rows (bench/README.md) in a
    // fraction of the memory. Checkpointing that database alone compresses it without waiting for the
    // queries running on the others. Everyone reads it through a view of the table's name.
    const store = ident(`${table}_db`);
    await this.withConnection(async (c) => {
      await c.run(`ATTACH ':memory:' AS ${store} (COMPRESS)`);
      // The file's own row numbers are the record order (snapshots keep the source's order).
      await c.run(
        `CREATE TABLE ${store}.main.${ident(table)} AS SELECT file_row_number AS __rowid, * EXCLUDE (file_row_number)${words.join('')} FROM read_parquet(${literal(file)}, file_row_number = true)`,
      );
      await c.run(`CHECKPOINT ${store}`);
      await c.run(`CREATE VIEW ${ident(table)} AS SELECT * FROM ${store}.main.${ident(table)}`);
    }).catch(async (err: unknown) => {
      await this.withConnection((c) => c.run(`DETACH DATABASE IF EXISTS ${store}`)).catch(() => undefined);
      throw AppError.unavailable(`The snapshot of index "${ref.name}" (version ${ref.version}) cannot be read`, err);
    });
    const described = await this.all(`DESCRIBE ${ident(table)}`);
    const columnTypes = new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
    // Only a shortcut: without it every word match takes the substring test, which is always right.
    const singleWord = await learnSingleWordFields((sql) => this.all(sql), table, ref.fields).catch(() => new Map());
    return { table, columnTypes, singleWord };
  }

  /**
   * Once a version is loaded, older ones of the same index go; queries already running keep their table.
   * An earlier version loaded for a saved report (asOf "saved") stays beside the newest one, but only the
   * last one asked for: a schedule of reports on many old versions never holds them all in memory.
   */
  private retireOlder(ref: SnapshotRef): void {
    let newest = ref.version;
    for (const cached of this.tables.values()) if (cached.name === ref.name) newest = Math.max(newest, cached.version);
    for (const [key, cached] of this.tables) {
      if (cached.name !== ref.name || key === ref.snapshot) continue;
      const older = cached.version < ref.version;
      const anotherEarlier = ref.version < newest && cached.version < newest;
      if (older || anotherEarlier) this.drop(key, cached);
    }
  }

  private drop(key: string, cached: CachedTable): void {
    this.tables.delete(key);
    this.pool.invalidate();
    void cached.table
      .then(({ table }) =>
        this.withConnection(async (c) => {
          await c.run(`DROP VIEW IF EXISTS ${ident(table)}`);
          await c.run(`DETACH DATABASE IF EXISTS ${ident(`${table}_db`)}`);
        }),
      )
      .catch(() => undefined);
  }

  async withConnection<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await (await this.db()).connect();
    try {
      return await fn(connection);
    } finally {
      connection.closeSync();
    }
  }

  /**
   * Runs one statement with bound parameters and returns plain JS rows. When `signal` aborts (the
   * call's deadline passed) the statement is interrupted inside DuckDB and this rejects with a 504.
   */
  async all(sql: string, params?: Record<string, DuckDBValue>, signal?: AbortSignal): Promise<Row[]> {
    if (signal?.aborted) throw abortReason(signal);
    return this.pool.use(async (c, prepare) => {
      const interrupt = () => c.interrupt();
      signal?.addEventListener('abort', interrupt, { once: true });
      try {
        const statement = await prepare(sql);
        if (params && Object.keys(params).length > 0) statement.bind(params);
        return await rowObjects(await statement.run());
      } catch (err) {
        if (signal?.aborted) throw abortReason(signal);
        throw err;
      } finally {
        signal?.removeEventListener('abort', interrupt);
      }
    });
  }

  async close(): Promise<void> {
    this.pool.invalidate();
    if (this.instance) (await this.instance).closeSync();
    this.instance = undefined;
    this.tables.clear();
  }
}

/**
 * The rows as plain JS objects, as DuckDB's getRowObjectsJS() makes them, one chunk (2,048 rows) at a
 * time with a turn of the event loop between chunks: converting a 100,000-row pivot at once held the
 * service's loop ~50 ms, and every other call on it waited (issue #27, bench/fairness.bench.js).
 */
async function rowObjects(result: DuckDBMaterializedResult): Promise<Row[]> {
  const names = result.deduplicatedColumnNames();
  const rows: Row[] = [];
  for (let i = 0; i < result.chunkCount; i++) {
    if (i > 0) await yieldToLoop();
    const chunk = result.getChunk(i);
    for (let r = 0; r < chunk.rowCount; r++) {
      const row: Row = {};
      chunk.visitRowValues(r, (value, _r, column, type) => {
        row[names[column]] = JSDuckDBValueConverter(value, type, JSDuckDBValueConverter);
      });
      rows.push(row);
    }
  }
  return rows;
}

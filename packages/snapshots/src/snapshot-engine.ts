import fs from 'node:fs';
import path from 'node:path';
import { type DuckDBConnection, type DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { AppError, abortReason } from '@quarry/errors';
import {
  attachableFile,
  factsFromJson,
  FACTS_TABLE,
  RECORDS_TABLE,
  recordsSelect,
  SAMPLE_LEVEL,
  SAMPLE_TABLE,
} from './attachable-snapshot';
import { ConnectionPool } from './connection-pool';
import { createEngineInstance } from './engine-instance';
import { JsTurns } from './js-turns';
import { rowObjects } from './row-objects';
import { learnSingleWordFields } from './single-word-fields';
import type { LoadedTable, Row, SnapshotEngineOptions, SnapshotRef } from './snapshot-types';
import { ident, literal } from './sql';
import { readTerms, TERMS_TABLE, TEXT_STATS_TABLE, type VersionTerms } from './text-terms';

export type { LoadedTable, Row, SnapshotEngineOptions, SnapshotRef } from './snapshot-types';

interface CachedTable {
  name: string;
  version: number;
  table: Promise<LoadedTable>;
  /** Its term counts, read on the first ranked or fuzzy search. */
  terms?: Promise<VersionTerms>;
  lastUsed: number;
  /** Memory a read-in version holds (0 while loading, and for attached ones). */
  bytes: number;
}

/**
 * One in-process DuckDB opening the published snapshots that this process has been asked about. A
 * large version has an attachable DuckDB file written at load, which is attached read-only (every
 * process serving it shares the same immutable file, and DuckDB reads only the blocks a query needs);
 * a small one is read from its Parquet file into this process's memory. Tables are keyed by the
 * snapshot file, which is unique per load: a drop followed by a reload of the same name can never be
 * answered from the dropped copy. Query and crosstab share it when they run in one process.
 */
export class SnapshotEngine {
  private instance: Promise<DuckDBInstance> | undefined;
  private readonly tables = new Map<string, CachedTable>();
  /**
   * Versions are read into memory one at a time: two read-ins at once would peak at twice the memory,
   * and each one's size is measured as what DuckDB's in-memory tables gained while it was read.
   */
  private readIns: Promise<unknown> = Promise.resolve();
  private warming: Promise<void> | undefined;
  private warmed = false;
  /** Queries borrow long-lived connections with their prepared statements; loads and drops use their own. */
  private readonly pool: ConnectionPool;
  /** Long JS passes over big results take turns on this thread (see JsTurns); pivots' roll-ups join them. */
  readonly turns = new JsTurns();
  /**
   * Every call on the instance that has not settled. DuckDB's instance must not close under one: a
   * connect queued on libuv's pool when the instance closed read freed memory and took the process down
   * (SIGSEGV in duckdb_connect; a drop's clean-up still connecting as the engine closed).
   */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The instance closing, once nothing runs on it: a call arriving then waits and opens the next one. */
  private closing: Promise<void> | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly options: SnapshotEngineOptions = {},
  ) {
    // As many idle connections as calls that run at once in practice (heavy calls are capped at 4).
    this.pool = new ConnectionPool(() => this.db(), 8);
  }

  private db(): Promise<DuckDBInstance> {
    this.instance ??= createEngineInstance(this.options);
    return this.instance;
  }

  /** The table of this snapshot, opening it once. */
  table(ref: SnapshotRef): Promise<LoadedTable> {
    const cached = this.tables.get(ref.snapshot);
    if (cached) {
      cached.lastUsed = Date.now();
      return cached.table;
    }
    const loaded = this.tracked(() => this.load(ref));
    const entry: CachedTable = { name: ref.name, version: ref.version, table: loaded, lastUsed: Date.now(), bytes: 0 };
    this.tables.set(ref.snapshot, entry);
    loaded.then(
      (t) => {
        this.retireOlder(ref);
        entry.bytes = t.heldBytes;
        this.keepToBudget(ref.snapshot);
      },
      () => this.tables.delete(ref.snapshot),
    );
    return loaded;
  }

  /**
   * The version's term counts (text-terms): read from its file where the load stored them, else counted
   * over its records once; held while the version is.
   */
  async terms(ref: SnapshotRef): Promise<VersionTerms> {
    const loaded = await this.table(ref);
    const cached = this.tables.get(ref.snapshot);
    if (cached?.terms) return cached.terms;
    const terms = readTerms((sql) => this.all(sql), loaded.storedTerms ?? { records: ident(loaded.table) }, ref.fields);
    if (cached) {
      cached.terms = terms;
      terms.catch(() => {
        if (cached.terms === terms) cached.terms = undefined;
      });
    }
    return terms;
  }

  /**
   * Opens every published version given, one after the other, once per process: a process is ready
   * (its gRPC readiness and /readyz) only after this, so a rolling update or a scale-up never routes a
   * first query to a process still opening its indexes. A version that cannot be
   * opened (a corrupt file) does not hold readiness back: its queries answer the error naming it,
   * and the other indexes are served.
   */
  warm(list: () => Promise<SnapshotRef[]>, onError?: (ref: SnapshotRef, err: unknown) => void): Promise<void> {
    this.warming ??= (async () => {
      for (const ref of await list()) await this.table(ref).catch((err: unknown) => onError?.(ref, err));
      this.warmed = true;
    })().catch((err: unknown) => {
      // The catalog could not list them: try again on the next readiness check.
      this.warming = undefined;
      throw err;
    });
    return this.warming;
  }

  /**
   * For a readiness check: starts `warm` on the first call and waits for it at most `waitMs` (a probe
   * answers in time; opening attached versions takes milliseconds), then rejects until it has opened
   * every published version (or found it unreadable).
   */
  async assertWarm(
    list: () => Promise<SnapshotRef[]>,
    log?: { warn(obj: object, msg: string): void },
    waitMs = 1000,
  ): Promise<void> {
    if (this.warmed) return;
    const warming = this.warm(list, (ref, err) =>
      log?.warn({ index: ref.name, version: ref.version, err }, 'index cannot be opened'),
    ).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([warming, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    if (!this.warmed) throw AppError.unavailable('Opening the published indexes');
  }

  /** The snapshots open now, as `name@version` (storage); for readiness, tests and diagnostics. */
  async opened(): Promise<string[]> {
    const out: string[] = [];
    for (const c of [...this.tables.values()]) {
      const t = await c.table.catch(() => undefined);
      if (t) out.push(`${c.name}@${c.version} (${t.storage})`);
    }
    return out;
  }

  /** What DuckDB's in-memory tables hold now, all versions together. */
  private async inMemoryBytes(): Promise<number> {
    const [row] = await this.all(`SELECT memory_usage_bytes AS n FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'`);
    return Number(row?.n ?? 0);
  }

  /**
   * Read-in versions over the index budget are let go, least recently used first, never the one just
   * opened (else a crosstab process would keep every index it had ever opened). A version
   * let go is read in again on its next use.
   */
  private keepToBudget(keep: string): void {
    const budget = this.options.indexBudgetBytes ?? Infinity;
    const used = () => [...this.tables.values()].reduce((n, c) => n + c.bytes, 0);
    while (used() > budget) {
      let oldest: [string, CachedTable] | undefined;
      for (const [key, c] of this.tables)
        if (key !== keep && c.bytes > 0 && (!oldest || c.lastUsed < oldest[1].lastUsed)) oldest = [key, c];
      if (!oldest) return;
      this.drop(oldest[0], oldest[1]);
    }
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
    const attachable = attachableFile(file);
    const store = ident(`${table}_db`);
    const storage = fs.existsSync(attachable) ? 'attached' : 'memory';
    let facts: ReturnType<typeof factsFromJson> | undefined;
    let sampleReadable = true;
    let heldBytes = 0;
    await this.withConnection(async (c) => {
      if (storage === 'attached') {
        // Read-only: the file is shared by every process serving the version and never changes.
        await c.run(`ATTACH ${literal(attachable)} AS ${store} (READ_ONLY)`);
        const [row] = (await c.runAndReadAll(`SELECT facts FROM ${store}.main.${FACTS_TABLE}`)).getRowObjectsJS();
        facts = factsFromJson(String(row.facts));
        if (this.options.warmSamples && facts.sample) {
          // Every column's pages, so whatever the filter and the axes read is in the buffer. The sample
          // only speeds up the cell-limit estimate: one that cannot be read leaves the version served,
          // its estimate sampling the records instead.
          sampleReadable = await c
            .runAndReadAll(`SELECT sum(hash(COLUMNS(*))) FROM ${store}.main.${SAMPLE_TABLE}`)
            .then(
              () => true,
              () => false,
            );
        }
        await c.run(`CREATE VIEW ${ident(table)} AS SELECT * FROM ${store}.main.${RECORDS_TABLE}`);
        return;
      }
      // A small version lives in its own compressed in-memory database: dictionary, bit-packed and
      // run-length columns made filtered scans and groupings 2-3x faster than plain rows
      // (bench/README.md) in a fraction of the memory. Checkpointing that database alone compresses it
      // without waiting for the queries running on the others. Everyone reads it through a view.
      const readIn = this.readIns.then(async () => {
        const before = await this.inMemoryBytes();
        await c.run(`ATTACH ':memory:' AS ${store} (COMPRESS)`);
        await c.run(`CREATE TABLE ${store}.main.${ident(table)} AS ${recordsSelect(file, ref.fields)}`);
        await c.run(`CHECKPOINT ${store}`);
        await c.run(`CREATE VIEW ${ident(table)} AS SELECT * FROM ${store}.main.${ident(table)}`);
        heldBytes = Math.max((await this.inMemoryBytes()) - before, 1);
      });
      this.readIns = readIn.catch(() => undefined);
      await readIn;
    }).catch(async (err: unknown) => {
      await this.withConnection(async (c) => {
        await c.run(`DROP VIEW IF EXISTS ${ident(table)}`);
        await c.run(`DETACH DATABASE IF EXISTS ${store}`);
      }).catch(() => undefined);
      // A truncated or corrupt file on the shared volume fails this index only; the process serves the others.
      throw AppError.unavailable(
        `The snapshot of index "${ref.name}" (version ${ref.version}) cannot be read: ${path.basename(storage === 'attached' ? attachable : file)}`,
        err,
      );
    });
    const described = await this.all(`DESCRIBE ${ident(table)}`);
    const columnTypes = new Map(described.map((r) => [String(r.column_name), String(r.column_type)]));
    if (facts !== undefined) {
      const { singleWord, distinctKeys, sample, rollups, terms } = facts;
      return {
        table,
        stored: `${store}.main.${RECORDS_TABLE}`,
        columnTypes,
        singleWord,
        distinctKeys,
        ...(sample && sampleReadable
          ? { sample: { ...sample, table: `${store}.main.${SAMPLE_TABLE}`, firstLevel: `${ident(SAMPLE_LEVEL)} = 0` } }
          : {}),
        ...(rollups.length
          ? { rollups: rollups.map((r) => ({ ...r, stored: `${store}.main.${ident(r.table)}` })) }
          : {}),
        ...(terms
          ? { storedTerms: { terms: `${store}.main.${TERMS_TABLE}`, stats: `${store}.main.${TEXT_STATS_TABLE}` } }
          : {}),
        storage,
        heldBytes,
      };
    }
    // Only a shortcut: without it every word match takes the substring test, which is always right.
    const singleWord = await learnSingleWordFields((sql) => this.all(sql), ident(table), ref.fields).catch(
      () => new Map(),
    );
    return { table, stored: `${store}.main.${ident(table)}`, columnTypes, singleWord, storage, heldBytes };
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

  /** Runs `call` on the instance, which a close leaves open until it settles. */
  private tracked<T>(call: () => Promise<T>): Promise<T> {
    // Whether or not the old instance closed cleanly, the call runs on the next one.
    if (this.closing)
      return this.closing.then(
        () => this.tracked(call),
        () => this.tracked(call),
      );
    const running = call();
    this.inFlight.add(running);
    void running.then(
      () => this.inFlight.delete(running),
      () => this.inFlight.delete(running),
    );
    return running;
  }

  withConnection<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    return this.tracked(() => this.connected(fn));
  }

  private async connected<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
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
  all(sql: string, params?: Record<string, DuckDBValue>, signal?: AbortSignal): Promise<Row[]> {
    return this.tracked(() => this.rows(sql, params, signal));
  }

  private async rows(sql: string, params?: Record<string, DuckDBValue>, signal?: AbortSignal): Promise<Row[]> {
    if (signal?.aborted) throw abortReason(signal);
    const result = await this.pool.use(async (c, prepare) => {
      const interrupt = () => c.interrupt();
      signal?.addEventListener('abort', interrupt, { once: true });
      try {
        const statement = await prepare(sql);
        if (params && Object.keys(params).length > 0) statement.bind(params);
        return await statement.run();
      } catch (err) {
        if (signal?.aborted) throw abortReason(signal);
        throw err;
      } finally {
        signal?.removeEventListener('abort', interrupt);
      }
    });
    // A materialised result needs no connection: a big one waits for its turn with the connection back
    // in the pool, and a one-chunk one (every search page) is converted at once.
    if (result.chunkCount <= 1) return rowObjects(result);
    return this.turns.take(async () => {
      if (signal?.aborted) throw abortReason(signal);
      return rowObjects(result);
    });
  }

  /**
   * Closes the DuckDB instance and forgets every table; a later call opens a new one (ExportEngineLease
   * closes its engine between exports to give the memory back).
   */
  async close(): Promise<void> {
    // What runs finishes first, and what it starts meanwhile (a load's next statement); calls that
    // arrive while the instance closes wait for it to be closed.
    while (this.closing || this.inFlight.size) {
      if (this.closing) await this.closing;
      else await Promise.allSettled([...this.inFlight]);
    }
    this.closing = this.closeInstance();
    try {
      await this.closing;
    } finally {
      this.closing = undefined;
    }
  }

  private async closeInstance(): Promise<void> {
    this.pool.invalidate();
    if (this.instance) (await this.instance).closeSync();
    this.instance = undefined;
    this.tables.clear();
    // The process's own spill folder (engineOptions): DuckDB removed its files, the folder stays.
    if (this.options.tempDirectory) fs.rmSync(this.options.tempDirectory, { recursive: true, force: true });
  }
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { abortReason, AppError } from '@quarry/errors';
import { pinLoadedAddons } from '@quarry/runtime';
import type { IndexEntry } from '@quarry/metadata-store';
import { chIdent, chLiteral, type ClickHouseParam } from './compile-clickhouse';
import { settingsClause, type ClickHouseRow, type ClickHouseRunner, type ClickHouseSource } from './clickhouse-runner';

/** The one command that installs chDB beside the repository (the test command runs it). */
export const CHDB_INSTALL = 'npm install --prefix .engines/chdb --no-save chdb@3.4.0';

/** How many estimate subsets a process keeps (one per version in use; each about 100,000 records). */
const KEPT_SUBSETS = 8;

/** The part of the `chdb` package this adapter uses. */
interface Chdb {
  queryBindAsync(
    query: string,
    params: object,
    opts?: { format?: string; signal?: AbortSignal },
  ): Promise<{ text(): string }>;
}

/** The repository's root: this file is services/crosstab/{src,dist}/adapters/clickhouse/. */
const REPO_ROOT = path.resolve(__dirname, '../../../../..');

/**
 * Loads chDB (ClickHouse as a library, about 550 MB): a normal dependency where one was installed (an
 * image may add it), else the copy under `.engines/chdb` that the test command installs, which
 * `npm start` never does. Missing: an error that says the command installing it.
 */
export function loadChdb(root = REPO_ROOT): Chdb {
  const tried = [path.join(root, 'package.json'), path.join(root, '.engines/chdb/package.json')];
  for (const from of tried) {
    try {
      const chdb = createRequire(from)('chdb') as Chdb;
      // A crosstab thread that loaded chDB would otherwise unload it as it ends, under chDB's own threads.
      pinLoadedAddons(/[/\\]@chdb[/\\]/);
      return chdb;
    } catch (err) {
      if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw AppError.unavailable(
    `QUARRY_PIVOT_ENGINE=clickhouse without CLICKHOUSE_URL runs ClickHouse in-process through the chdb package, which is not installed; install it with: ${CHDB_INSTALL} (in ${root})`,
  );
}

/**
 * chDB in-process over the data directory: each version is read straight from its Parquet snapshot
 * (`file(…, Parquet)`), the immutable file the load wrote and every process already has. No copy at
 * load and none per process: the values are the very ones DuckDB reads (64-bit integers, doubles,
 * dates and UTC timestamps keep their Parquet types), and ClickHouse reads only the columns a
 * statement uses, as it does from its own tables.
 */
export class ChdbRunner implements ClickHouseRunner {
  private readonly types = new Map<string, Promise<ReadonlyMap<string, string>>>();
  /** Kept subsets of the estimate: Memory tables of this process, by index, snapshot and step. */
  private readonly subsets = new Map<string, Promise<string>>();

  constructor(
    private readonly dataDir: string,
    private readonly chdb: Chdb = loadChdb(),
  ) {}

  async rows(
    sql: string,
    params: Record<string, ClickHouseParam>,
    settings: Record<string, string | number>,
    signal?: AbortSignal,
  ): Promise<ClickHouseRow[]> {
    if (signal?.aborted) throw abortReason(signal);
    let text: string;
    try {
      const result = await this.chdb.queryBindAsync(sql + settingsClause(settings), params, {
        format: 'JSONEachRow',
        signal,
      });
      text = result.text();
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      throw err;
    }
    return text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as ClickHouseRow);
  }

  private file(entry: IndexEntry): string {
    const file = path.resolve(this.dataDir, entry.snapshot);
    if (!fs.existsSync(file)) throw AppError.unavailable(`The snapshot of index "${entry.name}" is missing: ${file}`);
    return `file(${chLiteral(file)}, Parquet)`;
  }

  async source(entry: IndexEntry): Promise<ClickHouseSource> {
    const from = this.file(entry);
    const key = `${entry.name}\n${entry.snapshot}`;
    let types = this.types.get(key);
    if (!types) {
      types = this.rows(`DESCRIBE TABLE ${from}`, {}, {}).then(
        (rows) => new Map(rows.map((r) => [String(r.name), String(r.type)])),
      );
      this.types.set(key, types);
      types.catch(() => this.types.delete(key));
    }
    return { from, columnTypes: await types };
  }

  /**
   * By `_row_number`, the record's position in the Parquet file. The reader cannot skip to those records
   * (every page of the named columns is read), so a kept subset is copied once into a Memory table of
   * this process (every column: whole records, so every filter runs on it as on the records) and read
   * from there by the next estimates, as DuckDB keeps its stored sample's pages in its buffer.
   */
  async subset(entry: IndexEntry, every: number, keep: boolean): Promise<string> {
    const file = this.file(entry);
    const k = Math.trunc(every);
    if (!keep) return `(SELECT * FROM ${file} WHERE _row_number % ${k} = 0)`;
    const key = `${entry.name}\n${entry.snapshot}\n${k}`;
    let kept = this.subsets.get(key);
    if (!kept) {
      // One process holds one chDB engine: the name tells this data folder's file from another's.
      const hash = createHash('sha256')
        .update(`${path.resolve(this.dataDir, entry.snapshot)}\n${k}`)
        .digest('hex');
      const table = chIdent(`quarry_subset_${hash.slice(0, 24)}`);
      kept = this.rows(
        `CREATE TABLE IF NOT EXISTS ${table} ENGINE = Memory AS SELECT * FROM ${file} WHERE _row_number % ${k} = 0`,
        {},
        {},
      ).then(() => table);
      this.subsets.set(key, kept);
      kept.catch(() => this.subsets.delete(key));
      // Versions replaced by later loads keep their key: the oldest kept subsets go first past a few.
      for (const [old, table] of this.subsets) {
        if (this.subsets.size <= KEPT_SUBSETS) break;
        this.subsets.delete(old);
        void this.drop(table);
      }
    }
    return kept;
  }

  forget(name: string): void {
    for (const key of this.types.keys()) if (key.startsWith(`${name}\n`)) this.types.delete(key);
    for (const [key, table] of this.subsets)
      if (key.startsWith(`${name}\n`)) {
        this.subsets.delete(key);
        void this.drop(table);
      }
  }

  private async drop(table: Promise<string>): Promise<void> {
    try {
      await this.rows(`DROP TABLE IF EXISTS ${await table}`, {}, {});
    } catch {
      // Never created (its copy failed) or already gone: nothing is held.
    }
  }

  async close(): Promise<void> {
    const tables = [...this.subsets.values()];
    this.subsets.clear();
    this.types.clear();
    await Promise.all(tables.map((t) => this.drop(t)));
  }
}

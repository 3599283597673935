import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { abortReason, AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { chLiteral, type ClickHouseParam } from './compile-clickhouse';
import { settingsClause, type ClickHouseRow, type ClickHouseRunner, type ClickHouseSource } from './clickhouse-runner';

/** The one command that installs chDB beside the repository (the test command runs it). */
export const CHDB_INSTALL = 'npm install --prefix .engines/chdb --no-save chdb@3.4.0';

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
      return createRequire(from)('chdb') as Chdb;
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
    return { from, columnTypes: await types, position: '_row_number' };
  }

  forget(name: string): void {
    for (const key of this.types.keys()) if (key.startsWith(`${name}\n`)) this.types.delete(key);
  }

  async close(): Promise<void> {
    this.types.clear();
  }
}

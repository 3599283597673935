import fs from 'node:fs';
import type { ClickHouseClient } from '@clickhouse/client';
import { abortReason, AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { chIdent, type ClickHouseParam } from './compile-clickhouse';
import type { ClickHouseRow, ClickHouseRunner, ClickHouseSource } from './clickhouse-runner';

/** Socket errors that mean the server is away, not that the statement failed. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH']);

export interface ClickHouseServer {
  url: string;
  database: string;
  /** Set on a cluster: tables are created ON CLUSTER, each version a ReplicatedMergeTree per shard and a Distributed table over them. */
  cluster?: string;
}

/**
 * A version's table, named from the catalog entry as the Typesense collection is: one table per version,
 * so readers resolve it through the catalog and a saved report keeps its version's table.
 */
export function versionTable(entry: Pick<IndexEntry, 'name' | 'version'>): string {
  return `v_${Buffer.from(entry.name).toString('hex')}_${entry.version}`;
}

/** The ClickHouse type of a Parquet column written by the load (DuckDB's type names). */
function columnType(duckdbType: string): string {
  if (duckdbType === 'DATE') return 'Date32';
  if (duckdbType.startsWith('TIMESTAMP')) return "DateTime64(6, 'UTC')";
  if (duckdbType === 'BIGINT' || duckdbType === 'INTEGER') return 'Int64';
  if (duckdbType === 'DOUBLE' || duckdbType === 'FLOAT') return 'Float64';
  if (duckdbType === 'BOOLEAN') return 'Bool';
  return 'String';
}

/**
 * The PivotEngine's statements on a ClickHouse server or cluster through the official client: the
 * values go as the HTTP interface's typed query parameters, the settings per query, and `signal` cancels
 * the request (the server's `max_execution_time` bounds what it still runs).
 */
export class ClickHouseClientRunner implements ClickHouseRunner {
  /** Loaded on first use: a process that never reaches ClickHouse never loads its client. */
  private opened?: Promise<ClickHouseClient>;
  private readonly types = new Map<string, Promise<ReadonlyMap<string, string>>>();

  constructor(private readonly server: ClickHouseServer) {}

  private client(): Promise<ClickHouseClient> {
    this.opened ??= import('@clickhouse/client').then(({ createClient, ClickHouseLogLevel }) =>
      createClient({
        url: this.server.url,
        database: this.server.database,
        // Every failure reaches the caller, which handles it (a pivot past max_rows_to_group_by is an
        // answer, not a fault) or reports it: the client's own error log would print each to stderr.
        log: { level: ClickHouseLogLevel.OFF },
      }),
    );
    return this.opened;
  }

  async rows(
    sql: string,
    params: Record<string, ClickHouseParam>,
    settings: Record<string, string | number>,
    signal?: AbortSignal,
  ): Promise<ClickHouseRow[]> {
    try {
      const result = await (
        await this.client()
      ).query({
        query: sql,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: settings as Record<string, never>,
        abort_signal: signal,
      });
      return await result.json<ClickHouseRow>();
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && UNREACHABLE.has(code))
        // The host alone: the URL carries the password.
        throw AppError.unavailable(`ClickHouse at ${new URL(this.server.url).host} does not answer (${code})`, err);
      throw err;
    }
  }

  private onCluster(): string {
    return this.server.cluster ? ` ON CLUSTER ${chIdent(this.server.cluster)}` : '';
  }

  async source(entry: IndexEntry): Promise<ClickHouseSource> {
    const table = versionTable(entry);
    let types = this.types.get(table);
    if (!types) {
      types = this.rows(`DESCRIBE TABLE ${chIdent(table)}`, {}, {}).then(
        (rows) => new Map(rows.map((r) => [String(r.name), String(r.type)])),
      );
      this.types.set(table, types);
      types.catch(() => this.types.delete(table));
    }
    return { from: chIdent(table), columnTypes: await types };
  }

  /**
   * By `_part_offset`, each part's own record number: every part (and every shard's parts, which a
   * Distributed table exposes as MergeTree's virtual columns) gives its share. The server reads only the
   * columns a statement names, in parallel over its parts and shards; nothing is kept.
   */
  async subset(entry: IndexEntry, every: number): Promise<string> {
    return `(SELECT * FROM ${chIdent(versionTable(entry))} WHERE _part_offset % ${Math.trunc(every)} = 0)`;
  }

  /**
   * Copies a version's Parquet snapshot into its table before the catalog write names it: the table (per
   * shard, replicated, with a Distributed table over the shards on a cluster), the rows, then a count
   * checked against the record count, so a version is never served half copied.
   */
  async createVersion(
    entry: Pick<IndexEntry, 'name' | 'version' | 'recordCount'>,
    parquetFile: string,
    columns: ReadonlyArray<{ name: string; duckdbType: string }>,
  ): Promise<void> {
    const table = chIdent(versionTable(entry));
    const schema = columns.map((c) => `${chIdent(c.name)} Nullable(${columnType(c.duckdbType)})`).join(', ');
    const settings = 'SETTINGS allow_nullable_key = 1';
    if (this.server.cluster) {
      const local = chIdent(`${versionTable(entry)}_local`);
      await (
        await this.client()
      ).command({
        query: `CREATE TABLE IF NOT EXISTS ${local}${this.onCluster()} (${schema}) ENGINE = ReplicatedMergeTree ORDER BY tuple() ${settings}`,
      });
      await (
        await this.client()
      ).command({
        query: `CREATE TABLE IF NOT EXISTS ${table}${this.onCluster()} AS ${local} ENGINE = Distributed(${chIdent(this.server.cluster)}, currentDatabase(), ${local}, rand())`,
      });
    } else {
      await (
        await this.client()
      ).command({
        query: `CREATE TABLE IF NOT EXISTS ${table} (${schema}) ENGINE = MergeTree ORDER BY tuple() ${settings}`,
      });
    }
    await (
      await this.client()
    ).insert({
      table: versionTable(entry),
      values: fs.createReadStream(parquetFile),
      format: 'Parquet',
      clickhouse_settings: { insert_distributed_sync: 1 },
    });
    const [row] = await this.rows(`SELECT count() AS n FROM ${table}`, {}, { select_sequential_consistency: 1 });
    if (Number(row?.n) !== entry.recordCount)
      throw new Error(
        `ClickHouse holds ${String(row?.n)} records of ${entry.name} v${entry.version}, not ${entry.recordCount}`,
      );
  }

  /** Drops the tables of a version the load's pruning dropped. */
  async dropVersion(entry: Pick<IndexEntry, 'name' | 'version'>): Promise<void> {
    const name = versionTable(entry);
    this.types.delete(name);
    await (await this.client()).command({ query: `DROP TABLE IF EXISTS ${chIdent(name)}${this.onCluster()} SYNC` });
    if (this.server.cluster)
      await (
        await this.client()
      ).command({ query: `DROP TABLE IF EXISTS ${chIdent(`${name}_local`)}${this.onCluster()} SYNC` });
  }

  /** Drops every version table of an index but those of `keep` (after a publish: current, previous, saved-report versions). */
  async dropVersionsExcept(name: string, keep: readonly number[]): Promise<void> {
    const prefix = versionTable({ name, version: 0 }).replace(/0$/, '');
    const tables = await this.rows(
      'SELECT name FROM system.tables WHERE database = currentDatabase() AND startsWith(name, {prefix:String})',
      { prefix },
      {},
    );
    const versions = new Set(
      tables
        .map((t) => /^(\d+)(_local)?$/.exec(String(t.name).slice(prefix.length))?.[1])
        .filter((v) => v !== undefined),
    );
    for (const v of versions) if (!keep.includes(Number(v))) await this.dropVersion({ name, version: Number(v) });
  }

  forget(name: string): void {
    const prefix = `v_${Buffer.from(name).toString('hex')}_`;
    for (const key of this.types.keys()) if (key.startsWith(prefix)) this.types.delete(key);
  }

  async close(): Promise<void> {
    if (this.opened) await (await this.opened).close();
  }
}

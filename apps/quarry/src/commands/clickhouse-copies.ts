import path from 'node:path';
import type { Config } from '@quarry/config';
import type { IndexEntry } from '@quarry/metadata-store';
import type { SearchIndex } from '@quarry/query';
import type { SnapshotEngine } from '@quarry/snapshots';

/** What the load asks of a ClickHouse server (ClickHouseClientRunner). */
export interface VersionCopies {
  createVersion(
    entry: IndexEntry,
    parquetFile: string,
    columns: ReadonlyArray<{ name: string; duckdbType: string }>,
  ): Promise<void>;
  dropVersionsExcept(name: string, keep: readonly number[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * The load's search index, which also copies each version into the crosstab engine's ClickHouse server
 * (QUARRY_PIVOT_ENGINE=clickhouse with CLICKHOUSE_URL) before the catalog write names it, and drops the
 * versions that pruning lets go: a crosstab service never reads a version the server lacks, and the
 * server keeps what the snapshot folder keeps. Elsewhere the search index as it is. `close` ends the
 * connections to the server.
 */
export async function withClickHouseCopies(
  search: SearchIndex,
  config: Config,
  engine: SnapshotEngine,
  open: (server: NonNullable<Config['clickhouse']>) => Promise<VersionCopies> = async (server) => {
    const { ClickHouseClientRunner } = await import('@quarry/crosstab/clickhouse');
    return new ClickHouseClientRunner(server);
  },
): Promise<{ search: SearchIndex; close: () => Promise<void> }> {
  if (config.pivotEngine !== 'clickhouse' || !config.clickhouse) return { search, close: async () => {} };
  const copies = await open(config.clickhouse);
  const wrapped: SearchIndex = {
    prepare: async (entry) => {
      await search.prepare(entry);
      // The column types as DuckDB wrote them: DATE and TIMESTAMP tell calendar dates from instants.
      const { columnTypes } = await engine.table(entry);
      const columns = entry.fields.map((f) => ({ name: f.name, duckdbType: columnTypes.get(f.name) ?? 'VARCHAR' }));
      await copies.createVersion(entry, path.resolve(config.dataDir, entry.snapshot), columns);
    },
    search: (entry, plan) => search.search(entry, plan),
    retire: async (current, previous, kept = []) => {
      await search.retire(current, previous, kept);
      const keep = [current, ...(previous ? [previous] : []), ...kept].map((e) => e.version);
      await copies.dropVersionsExcept(current.name, keep);
    },
    drop: async (entry) => {
      await search.drop(entry);
      await copies.dropVersionsExcept(entry.name, []);
    },
    forget: (name) => search.forget(name),
    close: () => search.close(),
  };
  // The server's connections, which the command closes when it ends (the search index is the engine's).
  return { search: wrapped, close: () => copies.close() };
}

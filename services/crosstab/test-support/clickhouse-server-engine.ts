import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { IndexEntry } from '@quarry/metadata-store';
import { ClickHouseClientRunner } from '../src/adapters/clickhouse/clickhouse-client-runner';
import { ClickHousePivotEngine } from '../src/adapters/clickhouse/clickhouse-pivot-engine.adapter';
import type { OpenedPivotEngine } from '../src/adapters/pivot/pivot-engine.conformance';

/** The Parquet snapshot's columns with DuckDB's type names, as the load knows them. */
export async function parquetColumns(file: string): Promise<Array<{ name: string; duckdbType: string }>> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const rows = (
      await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`)
    ).getRowObjectsJS();
    return rows.map((r) => ({ name: String(r.column_name), duckdbType: String(r.column_type) }));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/**
 * Opens a conformance suite's version on a ClickHouse server as `quarry index load` does: the version's
 * table created and copied from the Parquet snapshot (its count checked), dropped when the suite ends.
 */
export function onServer(
  url: () => string,
  database: string,
): (dir: string, entry: IndexEntry) => Promise<OpenedPivotEngine> {
  return async (dir, entry) => {
    const runner = new ClickHouseClientRunner({ url: url(), database });
    const file = path.resolve(dir, entry.snapshot);
    await runner.createVersion(entry, file, await parquetColumns(file));
    const engine = new ClickHousePivotEngine(runner);
    return {
      pivots: engine,
      close: async () => {
        await runner.dropVersion(entry);
        await engine.close();
      },
    };
  };
}

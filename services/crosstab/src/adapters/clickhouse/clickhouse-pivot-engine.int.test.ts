import path from 'node:path';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { DuckDBInstance } from '@duckdb/node-api';
import { describeWithDocker } from '@quarry/testkit';
import { pivotCompareConformance } from '../pivot-compare.conformance';
import { pivotEngineConformance } from '../pivot-engine.conformance';
import { ChdbRunner } from './chdb-runner';
import { keyEstimateConformance } from './clickhouse-estimate.conformance';
import { ClickHouseClientRunner } from './clickhouse-client-runner';
import { ClickHousePivotEngine } from './clickhouse-pivot-engine.adapter';

// chDB is installed by the test command (scripts/test.sh) under .engines/chdb; ClickHouse's own engine in this process.
const inProcess = async (dir: string) => {
  const engine = new ClickHousePivotEngine(new ChdbRunner(dir));
  return { pivots: engine, close: () => engine.close() };
};
pivotEngineConformance('ClickHousePivotEngine (chDB in-process)', inProcess);
pivotCompareConformance('ClickHousePivotEngine (chDB in-process)', inProcess);
keyEstimateConformance('ClickHousePivotEngine (chDB in-process)', inProcess);

/** The Parquet snapshot's columns with DuckDB's type names, as the load knows them. */
async function parquetColumns(file: string): Promise<Array<{ name: string; duckdbType: string }>> {
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

describeWithDocker('ClickHousePivotEngine on a server (testcontainers clickhouse/clickhouse-server)', () => {
  let container: StartedTestContainer;
  beforeAll(async () => {
    container = await new GenericContainer('clickhouse/clickhouse-server:25.8')
      .withExposedPorts(8123)
      .withEnvironment({ CLICKHOUSE_DB: 'quarry', CLICKHOUSE_USER: 'quarry', CLICKHOUSE_PASSWORD: 'quarry' })
      .withWaitStrategy(Wait.forHttp('/ping', 8123))
      .start();
  }, 180000);
  afterAll(async () => {
    await container?.stop();
  });

  pivotEngineConformance('ClickHousePivotEngine (@clickhouse/client)', async (dir, entry) => {
    const url = `http://quarry:quarry@${container.getHost()}:${container.getMappedPort(8123)}`;
    const runner = new ClickHouseClientRunner({ url, database: 'quarry' });
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
  });
});

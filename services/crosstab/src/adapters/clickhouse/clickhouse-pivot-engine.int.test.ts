import fs from 'node:fs';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { describeWithDocker, settled } from '@quarry/testkit';
import { pivotCompareConformance } from '../pivot/pivot-compare.conformance';
import { gapsIndex, pivotEngineConformance, RECORDS } from '../pivot/pivot-engine.conformance';
import { onServer } from '../../../test-support/clickhouse-server-engine';
import { ChdbRunner } from './chdb-runner';
import { keyEstimateConformance } from './clickhouse-estimate.conformance';
import { ClickHousePivotEngine } from './clickhouse-pivot-engine.adapter';

// chDB is installed by the test command (scripts/test.sh) under .engines/chdb; ClickHouse's own engine in this process.
const inProcess = async (dir: string) => {
  const engine = new ClickHousePivotEngine(new ChdbRunner(dir));
  return { pivots: engine, close: () => engine.close() };
};
pivotEngineConformance('ClickHousePivotEngine (chDB in-process)', inProcess);
pivotCompareConformance('ClickHousePivotEngine (chDB in-process)', inProcess);
keyEstimateConformance('ClickHousePivotEngine (chDB in-process)', inProcess);

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

  const server = onServer(
    () => `http://quarry:quarry@${container.getHost()}:${container.getMappedPort(8123)}`,
    'quarry',
  );
  pivotEngineConformance('ClickHousePivotEngine (@clickhouse/client)', server);
  pivotCompareConformance('ClickHousePivotEngine (@clickhouse/client)', server);
  keyEstimateConformance('ClickHousePivotEngine (@clickhouse/client)', server);
});

describe('ChdbRunner: the estimate subset kept in this process', () => {
  it('copies every k-th record once into a Memory table, reads it again, and drops it when the index is forgotten', async () => {
    const { dir, entry } = await gapsIndex();
    const runner = new ChdbRunner(dir);
    try {
      const kept = () => runner.rows("SELECT name FROM system.tables WHERE startsWith(name, 'quarry_subset_')", {}, {});
      const before = (await kept()).length;
      const table = await runner.subset(entry, 7, true);
      expect(await runner.subset(entry, 7, true)).toBe(table);
      const [row] = await runner.rows(`SELECT count() AS n FROM ${table}`, {}, {});
      // Records 0, 7, 14, … of the file: every k-th.
      expect(Number(row.n)).toBe(Math.ceil(RECORDS.length / 7));
      expect((await kept()).length).toBe(before + 1);
      // Not kept: read from the file each time, nothing created.
      expect(await runner.subset(entry, 7, false)).toMatch(/_row_number % 7 = 0/);
      expect((await kept()).length).toBe(before + 1);
      // A process keeps a few: the oldest go first (each step here stands for another version).
      for (const k of [2, 3, 4, 5, 6, 8, 9, 10]) await runner.subset(entry, k, true);
      // The oldest is dropped in the background: wait for it (up to 30 s) rather than for a second at most.
      const count = async () => (await kept()).length;
      expect(await settled(count, before + 8, 30_000)).toBe(before + 8);
      // The first one kept (step 7) was the one let go.
      expect((await kept()).map((r) => `\`${String(r.name)}\``)).not.toContain(table);
      runner.forget(entry.name);
      expect(await settled(count, before, 30_000)).toBe(before);
    } finally {
      await runner.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtEntry } from '@quarry/testkit';
import { startChdbHttpServer, type ChdbHttpServer } from '../../../test-support/chdb-http-server';
import { onServer, parquetColumns } from '../../../test-support/clickhouse-server-engine';
import { pivotCompareConformance } from '../pivot/pivot-compare.conformance';
import { pivotEngineConformance } from '../pivot/pivot-engine.conformance';
import { ClickHouseClientRunner, versionTable } from './clickhouse-client-runner';
import { keyEstimateConformance } from './clickhouse-estimate.conformance';

/*
 * The server path (CLICKHOUSE_URL: ClickHouseClientRunner through the official @clickhouse/client) on
 * ClickHouse's own engine, served over HTTP by chDB in a process of its own (test-support/chdb-http-server.ts
 * says what that proves and what it does not: no real server's HTTP stack, no cluster, no Keeper). Without
 * CLICKHOUSE_CLUSTER, as here, every table is a plain MergeTree and no statement says ON CLUSTER.
 */
describe('ClickHousePivotEngine through @clickhouse/client, on chDB serving the HTTP interface', () => {
  let server: ChdbHttpServer;
  beforeAll(async () => {
    server = await startChdbHttpServer('quarry');
  }, 60000);
  afterAll(async () => {
    await server?.stop();
  });

  const open = onServer(() => server.url, 'quarry');
  pivotEngineConformance('ClickHousePivotEngine (@clickhouse/client on chDB over HTTP)', open);
  pivotCompareConformance('ClickHousePivotEngine (@clickhouse/client on chDB over HTTP)', open);
  keyEstimateConformance('ClickHousePivotEngine (@clickhouse/client on chDB over HTTP)', open);

  describe('versions as the load copies and prunes them', () => {
    let dir: string;
    let file: string;
    let runner: ClickHouseClientRunner;
    const records = Array.from({ length: 500 }, (_, i) => ({ name: `n${i % 7}`, at: '2024-05-01T10:00:00', x: i }));

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ch-versions-'));
      file = path.join(dir, 'v.json');
      fs.writeFileSync(file, JSON.stringify(records));
      runner = new ClickHouseClientRunner({ url: server.url, database: 'quarry' });
    });
    afterAll(async () => {
      await runner?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const tables = async () =>
      (
        await runner.rows(
          "SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND startsWith(name, 'v_') ORDER BY name",
          {},
          {},
        )
      ).map((r) => `${String(r.name)} ${String(r.engine)}`);

    it('copies a version into a MergeTree table of its own, checks its count, and drops all but the kept versions', async () => {
      const entry = await builtEntry({ name: 'Sales-2024.eu', file, dataDir: dir, types: {}, views: [] });
      const columns = await parquetColumns(path.resolve(dir, entry.snapshot));
      for (const version of [1, 2, 3])
        await runner.createVersion({ ...entry, version }, path.resolve(dir, entry.snapshot), columns);
      const v = (n: number) => versionTable({ name: entry.name, version: n });
      // No cluster: one MergeTree per version, no Distributed table over local ones.
      expect(await tables()).toEqual([`${v(1)} MergeTree`, `${v(2)} MergeTree`, `${v(3)} MergeTree`]);
      const [types] = await runner.rows(
        `SELECT toTypeName(at) AS at, toTypeName(x) AS x, count() AS n FROM \`${v(2)}\``,
        {},
        {},
      );
      expect({ ...types, n: Number(types.n) }).toEqual({
        at: "Nullable(DateTime64(6, 'UTC'))",
        x: 'Nullable(Int64)',
        n: 500,
      });
      await runner.dropVersionsExcept(entry.name, [1, 3]);
      expect(await tables()).toEqual([`${v(1)} MergeTree`, `${v(3)} MergeTree`]);
      await runner.dropVersionsExcept(entry.name, []);
      expect(await tables()).toEqual([]);
    });

    it('refuses a copy whose count is not the record count', async () => {
      const entry = await builtEntry({ name: 'short', file, dataDir: dir, types: {}, views: [] });
      const snapshot = path.resolve(dir, entry.snapshot);
      await expect(
        runner.createVersion({ ...entry, recordCount: 501 }, snapshot, await parquetColumns(snapshot)),
      ).rejects.toThrow('ClickHouse holds 500 records of short v1, not 501');
      await runner.dropVersion(entry);
    });

    it("a failed statement rejects with ClickHouse's code; an unreachable server with UNAVAILABLE naming the host", async () => {
      await expect(runner.rows('SELECT nope', {}, {})).rejects.toMatchObject({ code: '47' });
      const closed = new ClickHouseClientRunner({ url: 'http://user:secret@127.0.0.1:9', database: 'quarry' });
      const err = await closed.rows('SELECT 1', {}, {}).catch((e: Error) => e);
      expect(err).toMatchObject({ code: 'UNAVAILABLE' });
      expect(String((err as Error).message)).toContain('127.0.0.1:9');
      expect(String((err as Error).message)).not.toContain('secret');
      await closed.close();
    });
  });
});

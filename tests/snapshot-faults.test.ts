import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createIdentity, type Identity } from './support/identities';
import { rawRequest, rpcClient, type RawResponse } from './support/http';
import { runCli, startQuarry, type RunningQuarry } from './support/quarry-process';
import { startStackWithData, unwrap } from './support/stack';

/*
 * Issue #30, "Bad input and faults", end to end through JSON-RPC: a snapshot file on the shared volume
 * that is truncated (an attached DuckDB file, from 500,000 records) or corrupt (a small index's Parquet
 * file, read into memory) when a process starts. The process comes up and is ready, each broken index
 * answers an error with code 503 whose detail names its file, and the other indexes are served, with their numbers.
 */
const RECORDS = 500_000;

describe('a truncated or corrupt snapshot file, found when the server starts', () => {
  let tmp: string;
  let dataDir: string;
  let quarry: RunningQuarry | undefined;
  let analyst: Identity;

  const call = (method: string, params: unknown) => rpcClient(quarry!.baseUrl, analyst.token).call(method, params);
  const filesOf = (index: string, ext: string) =>
    fs
      .readdirSync(path.join(dataDir, 'indexes', index))
      .filter((f) => f.endsWith(ext))
      .map((f) => path.join(dataDir, 'indexes', index, f));
  const movieCount = async () => unwrap<{ total: number }>(await call('QUERIES.EXECUTE', { index: 'movies' }));
  const readingsCrosstab = () =>
    call('CROSSTAB.EXECUTE', {
      index: 'readings',
      rows: ['region'],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
      cache: false,
    });

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-faults-'));
    const source = path.join(tmp, 'readings.parquet');
    const duck = await DuckDBInstance.create(':memory:');
    const c = await duck.connect();
    await c.run(`COPY (SELECT ['East', 'West'][1 + i % 2] AS region, CAST(i % 1000 AS BIGINT) AS amount
      FROM range(${RECORDS}) t(i)) TO '${source}' (FORMAT parquet)`);
    c.closeSync();
    duck.closeSync();
    const stack = await startStackWithData({
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'readings', source], env);
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    quarry = stack.quarry;
    dataDir = stack.dataDir;
    analyst = await createIdentity(dataDir, 'analyst', { indexes: '*' });
  }, 180_000);

  afterAll(async () => {
    await quarry?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('serves all three indexes while their files are whole', async () => {
    expect(filesOf('readings', '.duckdb')).toHaveLength(1);
    expect(filesOf('movies', '.duckdb')).toHaveLength(0);
    // For the attached file too: the owner's only, in a directory of the owner's only.
    const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
    for (const f of [...filesOf('readings', '.duckdb'), ...filesOf('readings', '.parquet')])
      expect(mode(f)).toBe('600');
    expect(mode(path.join(dataDir, 'indexes', 'readings'))).toBe('700');
    const res = unwrap<{ data: { grandTotal: number[] } }>(await readingsCrosstab());
    expect(res.data?.data.grandTotal).toEqual([RECORDS]);
    expect((await movieCount()).data?.total).toBeGreaterThan(3000);
  });

  it('after a restart on broken files: ready, each broken index names its file in a 503 error, the others answer', async () => {
    await quarry!.stop();
    quarry = undefined;
    const [attached] = filesOf('readings', '.duckdb');
    fs.truncateSync(attached, Math.floor(fs.statSync(attached).size / 3));
    const [parquet] = filesOf('movies', '.parquet');
    fs.writeFileSync(parquet, 'PAR1 this is not a Parquet file');
    quarry = await startQuarry({ topology: 'all', dataDir });

    // Readiness is not held back by an index that cannot be opened.
    expect((await rawRequest(quarry.baseUrl, { method: 'GET', path: '/readyz' })).status).toBe(200);

    const expectNamed = (res: RawResponse, index: string, file: string) => {
      // A business error (HTTP 200, as the spec has it) with the service-unavailable code, never a 500.
      expect(res.status).toBe(200);
      const { error } = unwrap(res);
      expect(error?.code).toBe(503);
      expect(error?.data.detail).toContain(`"${index}"`);
      expect(error?.data.detail).toContain(path.basename(file));
      expect(res.text).not.toMatch(/ at \S+ \(|node_modules|duckdb::/);
    };
    expectNamed(await readingsCrosstab(), 'readings', attached);
    expectNamed(await call('QUERIES.EXECUTE', { index: 'movies', query: 'Titanic' }), 'movies', parquet);
    expectNamed(
      await call('CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['MPAA Rating'],
        totals: [{ aggregationType: 'Count' }],
      }),
      'movies',
      parquet,
    );

    // The other index answers searches and crosstabs, with its real numbers.
    const flights = unwrap<{ total: number }>(await call('QUERIES.EXECUTE', { index: 'flights', query: '*' }));
    expect(flights.data?.total).toBe(20_000);
    const byOrigin = unwrap<{ data: { grandTotal: number[] } }>(
      await call('CROSSTAB.EXECUTE', {
        index: 'flights',
        rows: ['origin'],
        totals: [{ aggregationType: 'Count' }],
        format: 'json',
      }),
    );
    expect(byOrigin.data?.data.grandTotal).toEqual([20_000]);
    // Asked again, a broken index is tried again and refused again; the process is still up.
    expect(unwrap(await readingsCrosstab()).error?.code).toBe(503);
    expect(quarry.alive()).toBe(true);
    expect((await rawRequest(quarry.baseUrl, { method: 'GET', path: '/healthz' })).status).toBe(200);
  }, 120_000);
});

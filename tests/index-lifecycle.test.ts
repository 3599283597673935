import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { VEGA } from './support/datasets';
import { createIdentity, type Identity } from './support/identities';
import { rpcClient } from './support/http';
import {
  makeDataDir,
  QUARRY_BIN,
  runCli,
  startQuarry,
  type RunningQuarry,
  type Topology,
} from './support/quarry-process';

function writeCsv(dir: string, name: string, rows: Array<[string, number]>): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, ['city,amount', ...rows.map(([c, a]) => `${c},${a}`)].join('\n'));
  return file;
}

async function rpc<T>(
  quarry: RunningQuarry,
  who: Identity,
  method: string,
  params: unknown,
): Promise<{ data?: T; error?: { code: number; data: { detail: string } } }> {
  const res = await rpcClient(quarry.baseUrl, who.token).call(method, params);
  const body = res.json as { result?: { data: T }; error?: { code: number; data: { detail: string } } };
  return { data: body.result?.data, error: body.error };
}

describe.each<Topology>(['all', 'split'])('index drop and reload while serving (QUARRY_TARGET=%s)', (topology) => {
  const dataDir = makeDataDir('quarry-lifecycle-');
  const env = { QUARRY_DATA_DIR: dataDir };
  let quarry: RunningQuarry | undefined;
  let analyst: Identity;

  beforeAll(async () => {
    const first = writeCsv(dataDir, 'first.csv', [
      ['Secret Town', 1000],
      ['Oslo', 1],
      ['Lima', 2],
    ]);
    expect((await runCli(['index', 'load', 't1', first], env)).code).toBe(0);
    quarry = await startQuarry({ topology, dataDir });
    analyst = await createIdentity(dataDir, 'analyst', { indexes: '*' });
    // A hang guard: the split topology starts six processes (in two rounds) on 2 loaded cores.
  }, 180_000);
  afterAll(async () => {
    await quarry?.stop();
  });

  it('serves exactly the published rows after a drop, and after a reload of the same name', async () => {
    const q = quarry as RunningQuarry;
    const search = () =>
      rpc<{ total: number; records: Array<{ city: string }> }>(q, analyst, 'QUERIES.EXECUTE', {
        index: 't1',
        query: '*',
      });
    const pivot = () =>
      rpc<{ data: string }>(q, analyst, 'CROSSTAB.EXECUTE', {
        index: 't1',
        rows: ['city'],
        totals: [{ aggregationType: 'Sum', field: 'amount' }],
      });
    expect((await search()).data?.records.map((r) => r.city)).toEqual(['Secret Town', 'Oslo', 'Lima']);
    expect((await pivot()).data?.data).toContain('Secret Town');

    const before = (await runCli(['index', 'list'], env)).stdout;
    expect((await runCli(['index', 'drop', 't1'], env)).code).toBe(0);
    expect((await search()).error).toMatchObject({ code: 404 });
    expect((await pivot()).error).toMatchObject({ code: 404 });

    const second = writeCsv(dataDir, 'second.csv', [
      ['Oslo', 1],
      ['Lima', 2],
    ]);
    const reload = await runCli(['index', 'load', 't1', second], env);
    expect(reload.code).toBe(0);
    const version = (text: string) => Number(/^t1\tv(\d+)/m.exec(text)?.[1]);
    expect(version((await runCli(['index', 'list'], env)).stdout)).toBeGreaterThan(version(before));

    const after = await search();
    expect(after.data?.total).toBe(2);
    expect(after.data?.records.map((r) => r.city)).toEqual(['Oslo', 'Lima']);
    const table = (await pivot()).data?.data ?? '';
    expect(table).not.toContain('Secret Town');
    expect(table).not.toContain('1000');
  });
});

describe('quarry index load: one load per name at a time, and crashes leave nothing behind', () => {
  const dataDir = makeDataDir('quarry-loadlock-');
  const env = { QUARRY_DATA_DIR: dataDir };
  const big = path.join(VEGA, 'flights-3m.parquet');
  // A declared type forces a full conversion of the 3M rows: a load that runs long enough to collide with.
  const slowLoad = ['index', 'load', 'flights', big, '--type', 'delay=number'];

  const files = () => fs.readdirSync(path.join(dataDir, 'indexes', 'flights'));

  it('refuses a second concurrent load of one name with a clear message, and publishes the first', async () => {
    const results = await Promise.all([runCli(slowLoad, env), runCli(slowLoad, env)]);
    const codes = results.map((r) => r.code).sort();
    // Both may also finish one after the other; what must never happen is two loads at once.
    if (codes[0] === 0 && codes[1] === 0) {
      expect(results.map((r) => /version (\d+)/.exec(r.stdout)?.[1]).sort()).toEqual(['1', '2']);
    } else {
      expect(codes).toEqual([0, 1]);
      const loser = results.find((r) => r.code === 1);
      expect(loser?.stderr).toMatch(/Index "flights" is being loaded or dropped by another process \(pid \d+/);
    }
    expect(files().filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // A hang guard, not a target: a full conversion of 3M rows (maybe two) takes minutes on a loaded machine.
  }, 300_000);

  it('survives kill -9 at random points of a load: the published version stays readable and the next load is not blocked', async () => {
    const published = (await runCli(['index', 'list'], env)).stdout;
    const version = Number(/^flights\tv(\d+)/m.exec(published)?.[1]);
    expect(version).toBeGreaterThan(0);
    const quarry = await startQuarry({ topology: 'all', dataDir });
    const analyst = await createIdentity(dataDir, 'analyst', { indexes: '*' });
    try {
      const count = async () =>
        (
          (
            await rpcClient(quarry.baseUrl, analyst.token).call('QUERIES.EXECUTE', {
              index: 'flights',
              query: 'origin:SFO',
              pageSize: 1,
            })
          ).json as { result: { data: { total: number } } }
        ).result.data.total;
      const expected = await count();
      expect(expected).toBeGreaterThan(1000);
      // Kill points spread over start-up, building, publishing and pruning.
      for (const delay of [150, 400, 650, 900, 1200]) {
        const child = spawn(process.execPath, [QUARRY_BIN, ...slowLoad], {
          env: { ...process.env, ...env },
          stdio: 'ignore',
        });
        const exited = new Promise((r) => child.once('exit', r));
        await new Promise((r) => setTimeout(r, delay));
        child.kill('SIGKILL');
        await exited;
        expect(await count()).toBe(expected);
        expect(/^flights\tv\d+/m.test((await runCli(['index', 'list'], env)).stdout)).toBe(true);
      }
      const next = await runCli(slowLoad, env);
      expect(next.stderr).not.toContain('being loaded');
      expect(next.code).toBe(0);
      expect(await count()).toBe(expected);
      // The crashed loads' temporary files are gone; only the current and previous snapshots stay, each
      // a Parquet file and (a large version) its attachable DuckDB file beside it.
      expect(files().filter((f) => !/\.(parquet|duckdb)$/.test(f))).toEqual([]);
      const parquet = files().filter((f) => f.endsWith('.parquet'));
      expect(parquet.length).toBeLessThanOrEqual(2);
      for (const f of files().filter((x) => x.endsWith('.duckdb')))
        expect(parquet).toContain(f.replace(/\.duckdb$/, '.parquet'));
    } finally {
      await quarry.stop();
    }
    // A hang guard: a server start, six loads begun (the last one whole) on a loaded machine.
  }, 480_000);
});

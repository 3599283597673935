import fs from 'node:fs';
import path from 'node:path';
import { createIdentity, type Identity } from './support/identities';
import { rpcClient } from './support/http';
import { makeDataDir, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';

/*
 * Rollups end to end: added, listed and dropped with the CLI, a crosstab over JSON-RPC answered from
 * one (meta.servedBy) with the numbers plain JS computes from the records, a drop while crosstabs run,
 * and a later load without a field the rollup reads.
 */

const ORIGINS = ['LAX', 'SFO', 'JFK', 'ORD', 'SEA'];
const DESTS = ['BOS', 'DEN', 'ATL', 'MIA', 'PHX', 'DFW', 'IAD'];

interface Flight {
  origin: string;
  dest: string;
  day: string;
  delay: number;
  dist: number;
}

function flights(n: number): Flight[] {
  return Array.from({ length: n }, (_, i) => ({
    origin: ORIGINS[(i * 7) % 5],
    dest: DESTS[(i * 11) % 7],
    day: `2024-${String(1 + ((i * 13) % 12)).padStart(2, '0')}-${String(1 + ((i * 17) % 28)).padStart(2, '0')}`,
    delay: ((i * 31) % 97) - 20,
    dist: 100 + ((i * 37) % 3000) / 8,
  }));
}

function writeCsv(file: string, rows: Flight[], without?: keyof Flight): void {
  const cols = (['origin', 'dest', 'day', 'delay', 'dist'] as const).filter((c) => c !== without);
  fs.writeFileSync(file, [cols.join(','), ...rows.map((r) => cols.map((c) => r[c]).join(','))].join('\n'));
}

interface JsonTable {
  columns: string[][];
  rows: Array<{ key: string[]; cells: Array<Array<number | null>>; total: Array<number | null> }>;
  grandTotal: Array<number | null>;
}

type Answer = { result?: { data: { data: JsonTable }; meta: { servedBy?: string } }; error?: { code: number } };

describe('rollups through the CLI and JSON-RPC', () => {
  const dataDir = makeDataDir('quarry-rollups-');
  const env = { QUARRY_DATA_DIR: dataDir };
  const records = flights(3000);
  let quarry: RunningQuarry | undefined;
  let analyst: Identity;

  const crosstab = async (params: Record<string, unknown>): Promise<Answer> =>
    (
      await rpcClient(quarry!.baseUrl, analyst.token).call('CROSSTAB.EXECUTE', {
        index: 'flights',
        format: 'json',
        cache: false,
        ...params,
      })
    ).json as Answer;
  const byOriginMonth = {
    rows: ['origin'],
    columns: [{ field: 'day', dateGroup: 'month' }],
    totals: [
      { aggregationType: 'Count' },
      { aggregationType: 'Sum', field: 'delay' },
      { aggregationType: 'CountDistinct', field: 'dest' },
      { aggregationType: 'Average', field: 'dist' },
    ],
  };

  /** Plain JS over the records: origin x month, the four totals of byOriginMonth. */
  const cell = (origin: string | undefined, month: string | undefined) => {
    const rs = records.filter((r) => (!origin || r.origin === origin) && (!month || r.day.slice(0, 7) === month));
    return [
      rs.length,
      rs.reduce((a, r) => a + r.delay, 0),
      new Set(rs.map((r) => r.dest)).size,
      rs.reduce((a, r) => a + r.dist, 0) / rs.length,
    ];
  };
  const close = (got: Array<number | null>, want: number[]) =>
    got.forEach((g, i) => expect(Math.abs((g as number) - want[i])).toBeLessThan(1e-9 * Math.max(1, want[i])));
  /** Every cell, row total and the grand total of byOriginMonth's table equal to plain JS's. */
  const expectRecordsTable = (table: JsonTable) => {
    expect(table.rows.map((r) => r.key[0]).sort()).toEqual([...ORIGINS].sort());
    expect(table.columns).toHaveLength(12);
    for (const r of table.rows) {
      table.columns.forEach((c, j) => close(r.cells[j], cell(r.key[0], c[0])));
      close(r.total, cell(r.key[0], undefined));
    }
    close(table.grandTotal, cell(undefined, undefined));
  };

  beforeAll(async () => {
    const file = path.join(dataDir, 'flights.csv');
    writeCsv(file, records);
    expect((await runCli(['index', 'load', 'flights', file], env)).code).toBe(0);
    quarry = await startQuarry({ topology: 'all', dataDir });
    analyst = await createIdentity(dataDir, 'analyst', { indexes: '*' });
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    await quarry?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a rollup it cannot build, naming the option', async () => {
    const bad = await runCli(['index', 'rollup', 'add', 'flights', '--rows', 'nope', '--totals', 'count'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--rows: index "flights" has no field "nope"/);
    const sumText = await runCli(
      ['index', 'rollup', 'add', 'flights', '--rows', 'origin', '--totals', 'sum:dest'],
      env,
    );
    expect(sumText.stderr).toMatch(/--totals: sum of "dest" needs a number field/);
    const grain = await runCli(
      ['index', 'rollup', 'add', 'flights', '--rows', 'origin', '--columns', 'day:fortnight', '--totals', 'count'],
      env,
    );
    expect(grain.stderr).toMatch(/--columns: the grain of "day" must be one of/);
    expect((await runCli(['index', 'rollup', 'list', 'flights'], env)).stdout).toMatch(/has no rollups/);
  });

  it('answers a covered crosstab from the rollup with the numbers of the records', async () => {
    const scanned = await crosstab(byOriginMonth);
    expect(scanned.result?.meta.servedBy).toBeUndefined();
    const added = await runCli(
      [
        'index',
        'rollup',
        'add',
        'flights',
        '--rows',
        'origin',
        '--columns',
        'day:month',
        '--totals',
        'count,sum:delay,countDistinct:dest,average:dist',
        '--name',
        'om',
      ],
      env,
    );
    expect(added.stderr).toBe('');
    expect(added.stdout).toMatch(/^rollup om built in/);
    expect((await runCli(['index', 'rollup', 'list', 'flights'], env)).stdout.trim()).toBe(
      'om\t--rows origin --columns day:month --totals count,sum:delay,countDistinct:dest,average:dist',
    );
    const served = await crosstab(byOriginMonth);
    expect(served.result?.meta.servedBy).toBe('om');
    const table = served.result!.data.data;
    expectRecordsTable(table);
    // The same table as the scan gave.
    expect(table).toEqual(scanned.result!.data.data);
    // A median is never read from a rollup.
    const median = await crosstab({ ...byOriginMonth, totals: [{ aggregationType: 'Median', field: 'delay' }] });
    expect(median.result?.meta.servedBy).toBeUndefined();
  }, 60_000);

  it('a start warms each rollup before it says ready; the first crosstab after it is answered from the rollup', async () => {
    await quarry!.stop();
    quarry = await startQuarry({ topology: 'all', dataDir });
    const lines = quarry.logs();
    const warmed = lines.findIndex((l) => l.includes('"msg":"rollups warmed"'));
    const ready = lines.findIndex((l) => l.includes('"msg":"quarry ready"'));
    expect(warmed).toBeGreaterThanOrEqual(0);
    expect(warmed).toBeLessThan(ready);
    expect((JSON.parse(lines[warmed]) as { crosstabs: number }).crosstabs).toBeGreaterThan(0);
    const first = await crosstab(byOriginMonth);
    expect(first.result?.meta.servedBy).toBe('om');
    expectRecordsTable(first.result!.data.data);
    // A hang guard: a stop and a start, each up to a minute on a loaded machine.
  }, 180_000);

  it('a saved crosstab report run through REPORTS.EXECUTE names the rollup too; a query report does not', async () => {
    const rpc = rpcClient(quarry!.baseUrl, analyst.token);
    const saved = (
      await rpc.call('CROSSTAB.EXECUTE', {
        index: 'flights',
        format: 'json',
        ...byOriginMonth,
        cache: false,
        saveReport: { name: 'origin by month' },
      })
    ).json as { result: { data: { report: { guid: string } }; meta: { servedBy?: string } } };
    expect(saved.result.meta.servedBy).toBe('om');
    const guid = saved.result.data.report.guid;
    const run = async (params: Record<string, unknown>) =>
      (await rpc.call('REPORTS.EXECUTE', { guid, ...params })).json as Answer;
    // The result cache's miss, then its hits (the saved version is the current one): each carries it.
    for (const [asOf, cache] of [
      ['latest', 'miss'],
      ['latest', 'hit'],
      ['saved', 'hit'],
    ]) {
      const ran = (await run({ asOf })) as Answer & { result: { meta: { cache?: string } } };
      expect(ran.error).toBeUndefined();
      expect(ran.result.meta).toMatchObject({ servedBy: 'om', cache });
      expectRecordsTable(ran.result.data.data);
    }
    // As HTML, the format the report was not saved with: still the rollup.
    expect(((await run({ format: 'html' })) as Answer).result?.meta.servedBy).toBe('om');
    const query = (
      await rpc.call('QUERIES.EXECUTE', { index: 'flights', query: 'origin:LAX', saveReport: { name: 'lax' } })
    ).json as { result: { data: { report: { guid: string } } } };
    const searched = (await rpc.call('REPORTS.EXECUTE', { guid: query.result.data.report.guid })).json as Answer;
    expect(searched.error).toBeUndefined();
    expect(searched.result?.meta).not.toHaveProperty('servedBy');
    // A crosstab report the rollup cannot answer (a median) scans, and says nothing.
    const median = (
      await rpc.call('CROSSTAB.EXECUTE', {
        index: 'flights',
        format: 'json',
        ...byOriginMonth,
        totals: [{ aggregationType: 'Median', field: 'delay' }],
        saveReport: { name: 'median delay' },
      })
    ).json as { result: { data: { report: { guid: string } } } };
    const scanned = (await rpc.call('REPORTS.EXECUTE', { guid: median.result.data.report.guid })).json as Answer;
    expect(scanned.error).toBeUndefined();
    expect(scanned.result?.meta).not.toHaveProperty('servedBy');
  }, 60_000);

  it('a drop while crosstabs run fails none of them; later ones scan', async () => {
    const running = Array.from({ length: 12 }, () => crosstab(byOriginMonth));
    const dropped = await runCli(['index', 'rollup', 'drop', 'flights', 'om'], env);
    expect(dropped.code).toBe(0);
    for (const answer of await Promise.all(running)) expect(answer.error).toBeUndefined();
    expect((await crosstab(byOriginMonth)).result?.meta.servedBy).toBeUndefined();
    const again = await runCli(['index', 'rollup', 'drop', 'flights', 'om'], env);
    expect(again.stderr).toMatch(/has no rollup "om"/);
  }, 60_000);

  it('suggests the rollup the crosstabs in the audit trail would use', async () => {
    await crosstab({
      rows: ['dest'],
      columns: [{ field: 'day', dateGroup: 'quarter' }],
      totals: [{ aggregationType: 'Count' }],
    });
    // The audit trail is written in batches (every half second): ask until the call above is in it, rather
    // than after a pause a loaded machine can outlast.
    const destByQuarter = 'quarry index rollup add flights --rows dest --columns day:quarter --totals count';
    let suggested = await runCli(['index', 'rollup', 'suggest', 'flights'], env);
    for (const deadline = Date.now() + 60_000; !suggested.stdout.includes(destByQuarter) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 250));
      suggested = await runCli(['index', 'rollup', 'suggest', 'flights'], env);
    }
    expect(suggested.code).toBe(0);
    const lines = suggested.stdout.trim().split('\n');
    // Origin x month was asked most (the median one is no rollup's), dest x quarter once.
    expect(lines[0]).toMatch(/^# \d+ of \d+ crosstab calls$/);
    expect(lines[1]).toBe(
      'quarry index rollup add flights --rows origin --columns day:month --totals average:dist,count,countDistinct:dest,sum:delay',
    );
    expect(lines).toContain(destByQuarter);
    // A hang guard: each try above starts a CLI process, slow on a loaded machine.
  }, 120_000);

  it('a load without a field a rollup reads drops the rollup and says so', async () => {
    expect(
      (
        await runCli(
          ['index', 'rollup', 'add', 'flights', '--rows', 'dest', '--totals', 'count,max:delay', '--name', 'dd'],
          env,
        )
      ).code,
    ).toBe(0);
    expect(
      (await crosstab({ rows: ['dest'], totals: [{ aggregationType: 'Max', field: 'delay' }] })).result?.meta.servedBy,
    ).toBe('dd');
    const file = path.join(dataDir, 'no-delay.csv');
    writeCsv(file, records, 'delay');
    const reload = await runCli(['index', 'load', 'flights', file], env);
    expect(reload.code).toBe(0);
    expect(reload.stdout).toMatch(/rollup dd dropped: "delay" is no longer a field of the index it can read/);
    expect((await runCli(['index', 'rollup', 'list', 'flights'], env)).stdout).toMatch(/has no rollups/);
    expect(
      (await crosstab({ rows: ['dest'], totals: [{ aggregationType: 'Count' }] })).result?.meta.servedBy,
    ).toBeUndefined();
  }, 60_000);
});

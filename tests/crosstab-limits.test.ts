import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createIdentity, type Identity } from './support/identities';
import { runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

const RECORDS = 600_000;
const STATIONS = 60_000;
const REGIONS = ['East', 'North', 'South', 'West', ''];

interface JsonTable {
  rowsOmitted: number;
  columnsOmitted: number;
  rowsFilteredOut: number;
  columns: unknown[][];
  rows: Array<{ key: unknown[]; cells: Array<Array<number | null>>; total: Array<number | null> }>;
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
}

/**
 * Through JSON-RPC, on an index large enough to be attached from its DuckDB file:
 * 60,000 stations x 5 regions x 2 totals is 600,000 cells, over the 100,000-cell limit, but the table
 * drawn with rowLimit 5 is 5 x 5 x 2. It used to be refused; now it answers, and every number is the one
 * a hand-written DuckDB query over the source file gives. The table without a limit is still refused,
 * with the same code as before.
 */
describe('CROSSTAB.EXECUTE: the cell limit counts the table as drawn', () => {
  let stack: Stack;
  let analyst: Identity;
  let tmp: string;
  let source: string;
  let duck: DuckDBInstance;

  const sql = async (text: string) =>
    (await (await duck.connect()).runAndReadAll(text)).getRowObjectsJS() as Array<Record<string, unknown>>;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-limits-'));
    source = path.join(tmp, 'readings.parquet');
    duck = await DuckDBInstance.create(':memory:');
    // Each station's 10 records share one amount: 60 stations per sum, so ties are broken by label.
    await sql(`COPY (SELECT 'S' || lpad(CAST(i % ${STATIONS} AS VARCHAR), 5, '0') AS station,
        [${REGIONS.map((r) => `'${r}'`).join(', ')}][1 + (i // ${STATIONS}) % ${REGIONS.length}] AS region,
        CAST((i * 7919) % 1000 AS BIGINT) AS amount
      FROM range(${RECORDS}) t(i)) TO '${source}' (FORMAT parquet)`);
    stack = await startStackWithData({
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'readings', source], env);
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 180_000);

  afterAll(async () => {
    await stack?.quarry.stop();
    duck?.closeSync();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const request = {
    index: 'readings',
    rows: ['station'],
    columns: [{ field: 'region' }],
    totals: [
      { aggregationType: 'Sum', field: 'amount' },
      { aggregationType: 'Count', field: '' },
    ],
    format: 'json',
  };

  it('the large index is attached from the DuckDB file written at load', () => {
    const dir = path.join(stack.dataDir, 'indexes', 'readings');
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.duckdb'))).toHaveLength(1);
  });

  it('rowLimit 5 by value answers what hand-written SQL gives: kept rows, their cells, and totals over everything', async () => {
    const res = await stack.call<{ data: JsonTable }>(analyst, 'CROSSTAB.EXECUTE', {
      ...request,
      rowOrder: { by: 'value', measure: 0, direction: 'desc' },
      rowLimit: 5,
    });
    expect(res.error).toBeUndefined();
    const table = res.data!.data;
    expect(table.rowsOmitted).toBe(STATIONS - 5);
    const src = `read_parquet('${source}')`;
    const top = await sql(
      `SELECT station, sum(amount) AS s, count(*) AS n FROM ${src} GROUP BY station ORDER BY s DESC, lower(station), station LIMIT 5`,
    );
    expect(table.rows.map((r) => r.key)).toEqual(top.map((t) => [t.station]));
    expect(table.rows.map((r) => r.total)).toEqual(top.map((t) => [Number(t.s), Number(t.n)]));
    // Columns in label order, blank last.
    const regions = [...REGIONS.filter((r) => r !== '').sort(), null];
    expect(table.columns).toEqual(regions.map((r) => [r]));
    const cells = await sql(
      `SELECT station, nullif(region, '') AS region, sum(amount) AS s, count(*) AS n FROM ${src}
       WHERE station IN (${top.map((t) => `'${String(t.station)}'`).join(', ')}) GROUP BY ALL`,
    );
    table.rows.forEach((row) =>
      row.cells.forEach((cell, j) => {
        const c = cells.find((x) => x.station === row.key[0] && x.region === regions[j]);
        expect(cell).toEqual(c ? [Number(c.s), Number(c.n)] : [null, null]);
      }),
    );
    // Column totals and the grand total are over every station, not only the five shown.
    const byRegion = await sql(
      `SELECT nullif(region, '') AS region, sum(amount) AS s, count(*) AS n FROM ${src} GROUP BY ALL`,
    );
    table.columnTotals.forEach((t, j) => {
      const c = byRegion.find((x) => x.region === regions[j])!;
      expect(t).toEqual([Number(c.s), Number(c.n)]);
    });
    const [all] = await sql(`SELECT sum(amount) AS s, count(*) AS n FROM ${src}`);
    expect(table.grandTotal).toEqual([Number(all.s), RECORDS]);
    expect(Number(all.n)).toBe(RECORDS);
  });

  it('columnLimit with rowFilter: the drawn table, filtered rows counted, row totals over every column', async () => {
    const res = await stack.call<{ data: JsonTable }>(analyst, 'CROSSTAB.EXECUTE', {
      ...request,
      rowFilter: { measure: 0, op: '>', value: 9950 },
      columnOrder: { by: 'label', direction: 'asc' },
      columnLimit: 2,
    });
    expect(res.error).toBeUndefined();
    const src = `read_parquet('${source}')`;
    const kept = await sql(
      `SELECT station, sum(amount) AS s, count(*) AS n FROM ${src} GROUP BY station HAVING sum(amount) > 9950 ORDER BY lower(station), station`,
    );
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(2000);
    const table = res.data!.data;
    expect(table.rowsFilteredOut).toBe(STATIONS - kept.length);
    expect(table.columnsOmitted).toBe(REGIONS.length - 2);
    expect(table.columns).toEqual([['East'], ['North']]);
    expect(table.rows.map((r) => r.key)).toEqual(kept.map((k) => [k.station]));
    expect(table.rows.map((r) => r.total)).toEqual(kept.map((k) => [Number(k.s), Number(k.n)]));
  });

  it('without a limit the table is truly too big: refused with the cell-limit error, code unchanged', async () => {
    const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', request);
    expect(res.error?.code).toBe(400);
    // "or more" is the refusal from the key counts kept at load, before any pass over the records (the
    // refusal after a pass says "would have N cells"): every station and region, blank merged, counted.
    expect(res.error?.data.detail).toMatch(
      /would have \d+ cells or more \(60000 rows x 5 columns x 2 totals\); the limit is 100000/,
    );
    // A filter makes the load's counts inapplicable; the sample of the filtered records still proves it.
    const filtered = await stack.call(analyst, 'CROSSTAB.EXECUTE', { ...request, query: 'amount:[0 TO 999]' });
    expect(filtered.error?.code).toBe(400);
    expect(filtered.error?.data.detail).toMatch(/would have \d+ cells or more \(\d+ rows x \d+ columns x 2 totals\)/);
  });

  // Issue #30, "Bad input and faults": a load while 8 clients query an attached index. Every answer is
  // exactly the old version's or the new one's (never a mix, never a 5xx), and once the load has
  // published, every answer is the new one's. The new file adds 1 to every amount: its Sum is 600,000 more.
  it('a reload while 8 clients query the attached index: no 5xx, each answer one whole version, then only the new one', async () => {
    const next = path.join(tmp, 'readings-next.parquet');
    await sql(
      `COPY (SELECT station, region, amount + 1 AS amount FROM read_parquet('${source}')) TO '${next}' (FORMAT parquet)`,
    );
    const [before] = await sql(`SELECT sum(amount) AS s FROM read_parquet('${source}')`);
    const [after] = await sql(`SELECT sum(amount) AS s FROM read_parquet('${next}')`);
    const versions = [Number(before.s), Number(after.s)];
    const byRegion = { ...request, rows: ['region'], columns: [], cache: false };
    const seen: number[] = [];
    const problems: string[] = [];
    let loading = true;
    const client = async () => {
      while (loading) {
        const res = await stack.call<{ data: JsonTable }>(analyst, 'CROSSTAB.EXECUTE', byRegion);
        if (res.error) problems.push(`${res.error.code} ${res.error.message}`);
        else seen.push(res.data!.data.grandTotal[0] as number);
      }
    };
    const clients = Array.from({ length: 8 }, client);
    const load = await runCli(['index', 'load', 'readings', next], stack.env);
    loading = false;
    await Promise.all(clients);
    expect({ code: load.code, stderr: load.code === 0 ? '' : load.stderr }).toEqual({ code: 0, stderr: '' });
    expect(problems).toEqual([]);
    expect(seen.length).toBeGreaterThan(8);
    expect(seen.filter((v) => !versions.includes(v))).toEqual([]);
    // Published: no client sees the old rows again.
    const afterLoad = await Promise.all(
      Array.from({ length: 8 }, () => stack.call<{ data: JsonTable }>(analyst, 'CROSSTAB.EXECUTE', byRegion)),
    );
    expect(afterLoad.map((r) => r.data?.data.grandTotal[0])).toEqual(Array(8).fill(versions[1]));
    expect(afterLoad.map((r) => r.data?.data.grandTotal[1])).toEqual(Array(8).fill(RECORDS));
  }, 180_000);
});

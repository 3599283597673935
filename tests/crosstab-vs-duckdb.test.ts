import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { runCli } from './support/quarry-process';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * A differential test: CROSSTAB.EXECUTE's JSON over JSON-RPC against SQL written here by hand on DuckDB,
 * cell by cell, subtotals, column and grand totals included, on generated adversarial data (keys with
 * trailing and leading blanks, backslashes, quotes, the literal "(blank)", unicode; decimals at
 * ±999999999999.99; integers near 2^53; instants at daylight-saving edges in two zones and in ISO week
 * 53). Then every row's and column's drill query is run through QUERIES.EXECUTE and must count its cell.
 *
 * Integers and Min/Max compare exactly; other doubles within 1e-13 of the group's scale (the sum of the
 * magnitudes added), which 12-digit rounding would break and summation order cannot.
 */

type Key = Array<string | number | null>;
interface JsonRow {
  key: Key;
  query?: string | null;
  subtotal?: true;
  cells: Array<Array<number | null>>;
  total: Array<number | null>;
}
interface JsonTable {
  columns: Key[];
  columnQueries: Array<string | null>;
  rows: JsonRow[];
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
}

/** mulberry32: the same data every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS: Array<string | null | undefined> = [
  'alpha',
  'alpha ',
  ' alpha',
  'Alpha',
  'back\\slash "quoted"',
  '(blank)',
  '',
  null,
  undefined,
  'Ünïcödé ✓',
  '日本語',
  'a:b=c* (d) [e]',
  'tab\there',
];
const GROUPS: Array<string | null> = ['x', 'y', 'z', null];
const AMOUNTS = [999999999999.99, -999999999999.99, 0.1, -0.3, 1 / 3, 2 / 7, 123456.789, 0, -42.5, 1e-7];
const BIG = 9007199254740000;

/** Instants at the edges that break date grouping: DST changes in Paris and New York, ISO week 53. */
function instants(): string[] {
  const out: string[] = [];
  const every = (from: string, to: string, minutes: number) => {
    for (let t = Date.parse(from); t <= Date.parse(to); t += minutes * 60_000) out.push(new Date(t).toISOString());
  };
  every('2021-03-28T00:00:00Z', '2021-03-28T02:30:00Z', 20);
  every('2021-10-31T00:00:00Z', '2021-10-31T02:00:00Z', 20);
  every('2021-03-14T06:00:00Z', '2021-03-14T08:00:00Z', 30);
  every('2021-11-07T05:00:00Z', '2021-11-07T07:00:00Z', 30);
  out.push(
    '2020-12-31T22:30:00Z',
    '2021-01-01T00:30:00Z',
    '2021-01-03T23:30:00Z',
    '2021-01-04T00:30:00Z',
    '2026-12-31T23:59:59Z',
    '2027-01-01T00:30:00Z',
    '2015-12-31T12:00:00Z',
  );
  return out;
}

/** An instant written as a person's file might: with Z, or with the offset it had in some zone. */
function written(iso: string, r: () => number): string {
  if (r() < 0.5) return iso;
  const ms = Date.parse(iso);
  const offsetMin = [120, 60, -300, -240, 330][Math.floor(r() * 5)];
  const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
  const sign = offsetMin >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMin);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-vs-duckdb-'));
const FILE = path.join(work, 'adversarial.jsonl');

function writeData(): number {
  const r = random(20261126);
  const stamps = instants();
  const lines: string[] = [];
  for (let i = 0; i < 900; i++) {
    const rec: Record<string, unknown> = {};
    const k = KEYS[Math.floor(r() * KEYS.length)];
    if (k !== undefined) rec.k = k;
    rec.g = GROUPS[Math.floor(r() * GROUPS.length)];
    if (r() < 0.9) rec.amt = AMOUNTS[Math.floor(r() * AMOUNTS.length)];
    rec.big = r() < 0.5 ? BIG + Math.floor(r() * 900) : -(BIG + Math.floor(r() * 900));
    if (r() < 0.95) rec.ts = written(stamps[Math.floor(r() * stamps.length)], r);
    rec.day = `2020-12-${String(26 + Math.floor(r() * 6)).padStart(2, '0')}`;
    lines.push(JSON.stringify(rec));
  }
  fs.writeFileSync(FILE, lines.join('\n') + '\n');
  return lines.length;
}

let stack: Stack;
let analyst: Identity;
let db: DuckDBInstance;
let c: DuckDBConnection;

beforeAll(async () => {
  writeData();
  stack = await startStackWithData({
    extra: async (env) => {
      const res = await runCli(['index', 'load', 'adv', FILE], env);
      if (res.code !== 0) throw new Error(res.stderr);
    },
  });
  analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  db = await DuckDBInstance.create();
  c = await db.connect();
  await c.run(
    `CREATE TABLE t AS SELECT k, g, amt, big, CAST(ts AS TIMESTAMPTZ) AS ts, CAST(day AS DATE) AS day
     FROM read_json('${FILE}', format = 'newline_delimited',
       columns = {k: 'VARCHAR', g: 'VARCHAR', amt: 'DOUBLE', big: 'BIGINT', ts: 'VARCHAR', day: 'VARCHAR'})`,
  );
}, 180_000);

afterAll(async () => {
  c?.closeSync();
  db?.closeSync();
  await stack?.quarry.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

async function sql(text: string): Promise<Array<Record<string, unknown>>> {
  return (await c.runAndReadAll(text)).getRowObjectsJS() as Array<Record<string, unknown>>;
}

async function crosstab(params: Record<string, unknown>): Promise<JsonTable> {
  const res = await stack.call<{ data: JsonTable }>(analyst, 'CROSSTAB.EXECUTE', {
    index: 'adv',
    format: 'json',
    cache: false,
    ...params,
  });
  if (!res.data) throw new Error(`CROSSTAB.EXECUTE: ${JSON.stringify(res.error)}`);
  return res.data.data;
}

async function count(query: string): Promise<number> {
  const res = await stack.call<{ total: number }>(analyst, 'QUERIES.EXECUTE', { index: 'adv', query, pageSize: 1 });
  if (!res.data) throw new Error(`QUERIES.EXECUTE ${JSON.stringify(query)}: ${JSON.stringify(res.error)}`);
  return res.data.total;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const keyText = (k: Key) => JSON.stringify(k);

/** Quarry's value against DuckDB's: exact, or within 1e-13 of the magnitudes summed. */
function same(got: number | null, want: number | null, scale: number, exact: boolean): boolean {
  if (got === null || want === null) return got === want;
  if (exact) return got === want;
  return Math.abs(got - want) <= 1e-13 * Math.max(scale, Math.abs(want));
}

interface Expected {
  values: Array<number | null>;
  /** Per value: compared exactly. */
  exact: boolean[];
  scale: number;
}

/** Every mismatch, as text: empty when the two agree on every key and value. */
function compare(where: string, got: Map<string, Array<number | null>>, want: Map<string, Expected>): string[] {
  const problems: string[] = [];
  for (const k of want.keys()) if (!got.has(k)) problems.push(`${where}: key ${k} missing`);
  for (const [k, values] of got) {
    const w = want.get(k);
    if (!w) {
      problems.push(`${where}: key ${k} is not in the data`);
      continue;
    }
    values.forEach((v, i) => {
      if (!same(v, w.values[i], w.scale, w.exact[i]))
        problems.push(`${where} ${k} total ${i}: got ${String(v)}, DuckDB ${String(w.values[i])}`);
    });
  }
  return problems;
}

const TOTALS = [
  { aggregationType: 'Count' },
  { aggregationType: 'Sum', field: 'amt' },
  { aggregationType: 'Average', field: 'amt' },
  { aggregationType: 'Min', field: 'amt' },
  { aggregationType: 'Max', field: 'amt' },
  { aggregationType: 'Sum', field: 'big' },
  { aggregationType: 'CountDistinct', field: 'g' },
];
const TOTALS_SQL = `count(*) AS t0, sum(amt) AS t1, avg(amt) AS t2, min(amt) AS t3, max(amt) AS t4,
  CAST(sum(big) AS VARCHAR) AS t5, count(DISTINCT nullif(g, '')) AS t6, sum(abs(amt)) AS scale`;
const EXACT = [true, false, false, true, true, true, true];

function expected(
  rows: Array<Record<string, unknown>>,
  key: (r: Record<string, unknown>) => Key,
): Map<string, Expected> {
  return new Map(
    rows.map((r) => [
      keyText(key(r)),
      {
        values: [0, 1, 2, 3, 4, 5, 6].map((i) => num(r[`t${i}`])),
        exact: EXACT,
        scale: Number(r.scale ?? 0),
      },
    ]),
  );
}

const blank = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));

describe('CROSSTAB.EXECUTE against DuckDB by hand, on adversarial data', () => {
  it('rows by a text key: every total, and the grand total', async () => {
    const table = await crosstab({ rows: ['k'], totals: TOTALS });
    const want = expected(await sql(`SELECT nullif(k, '') AS k, ${TOTALS_SQL} FROM t GROUP BY 1`), (r) => [blank(r.k)]);
    const got = new Map(table.rows.map((r) => [keyText(r.key), r.total]));
    expect(compare('rows k', got, want)).toEqual([]);
    const grand = expected(await sql(`SELECT ${TOTALS_SQL} FROM t`), () => []);
    expect(compare('grand', new Map([['[]', table.grandTotal]]), grand)).toEqual([]);
    // The sums of integers near 2^53 stay within 2^53 here, so a double carries them exactly.
    expect(table.rows.length).toBe(want.size);
  });

  it('rows by two keys with subtotals: leaves and subtotals from the records (distinct counts included)', async () => {
    const table = await crosstab({ rows: ['k', 'g'], totals: TOTALS, subtotals: true });
    const leaves = expected(
      await sql(`SELECT nullif(k, '') AS k, nullif(g, '') AS g, ${TOTALS_SQL} FROM t GROUP BY 1, 2`),
      (r) => [blank(r.k), blank(r.g)],
    );
    const subtotals = expected(await sql(`SELECT nullif(k, '') AS k, ${TOTALS_SQL} FROM t GROUP BY 1`), (r) => [
      blank(r.k),
    ]);
    const gotLeaves = new Map(table.rows.filter((r) => !r.subtotal).map((r) => [keyText(r.key), r.total]));
    const gotSubs = new Map(
      table.rows.filter((r) => r.subtotal).map((r) => [keyText(r.key.slice(0, 1)), r.total] as const),
    );
    expect(compare('leaves', gotLeaves, leaves)).toEqual([]);
    expect(compare('subtotals', gotSubs, subtotals)).toEqual([]);
  });

  it('rows × columns: every cell, every column total, and the drill query of each row, column and cell', async () => {
    const table = await crosstab({
      rows: ['k'],
      columns: [{ field: 'g' }],
      totals: [TOTALS[0], TOTALS[2]],
    });
    const cells = await sql(
      `SELECT nullif(k, '') AS k, nullif(g, '') AS g, count(*) AS n, avg(amt) AS a, sum(abs(amt)) AS scale FROM t GROUP BY 1, 2`,
    );
    const want = new Map(cells.map((r) => [keyText([blank(r.k), blank(r.g)]), r]));
    const problems: string[] = [];
    for (const row of table.rows) {
      expect(row.query).toEqual(expect.any(String));
      expect(await count(row.query!)).toBe(row.total[0]);
      for (const [j, col] of table.columns.entries()) {
        const [n, a] = row.cells[j];
        const w = want.get(keyText([row.key[0], col[0]]));
        if (!w) {
          if (n !== null && n !== 0) problems.push(`cell ${keyText([row.key[0], col[0]])} is not in the data`);
          continue;
        }
        if (n !== Number(w.n)) problems.push(`cell ${keyText([row.key[0], col[0]])} count ${n} vs ${String(w.n)}`);
        if (!same(a, num(w.a), Number(w.scale ?? 0) / Number(w.n), false))
          problems.push(`cell ${keyText([row.key[0], col[0]])} average ${a} vs ${String(w.a)}`);
        // The cell's drill query: its row's AND its column's.
        if (n) expect(await count(`${row.query} AND ${table.columnQueries[j]}`)).toBe(n);
      }
    }
    const columns = new Map(
      (await sql(`SELECT nullif(g, '') AS g, count(*) AS n FROM t GROUP BY 1`)).map((r) => [blank(r.g), Number(r.n)]),
    );
    for (const [j, col] of table.columns.entries()) {
      expect(table.columnTotals[j][0]).toBe(columns.get(col[0] as string | null));
      expect(await count(table.columnQueries[j]!)).toBe(table.columnTotals[j][0]);
    }
    expect(problems).toEqual([]);
  });

  const LABEL: Record<string, (l: string) => string> = {
    year: (l) => `strftime(${l}, '%Y')`,
    quarter: (l) => `strftime(${l}, '%Y') || '-Q' || quarter(${l})`,
    month: (l) => `strftime(${l}, '%Y-%m')`,
    week: (l) => `lpad(CAST(isoyear(${l}) AS VARCHAR), 4, '0') || '-W' || lpad(CAST(week(${l}) AS VARCHAR), 2, '0')`,
    day: (l) => `strftime(${l}, '%Y-%m-%d')`,
    hour: (l) => `strftime(${l}, '%Y-%m-%dT%H')`,
    monthOfYear: (l) => `lpad(CAST(month(${l}) AS VARCHAR), 2, '0')`,
    dayOfWeek: (l) => `CAST(isodow(${l}) AS VARCHAR)`,
    hourOfDay: (l) => `lpad(CAST(hour(${l}) AS VARCHAR), 2, '0')`,
  };

  it.each(
    ['Europe/Paris', 'America/New_York'].flatMap((zone) => Object.keys(LABEL).map((group) => [group, zone] as const)),
  )(
    'instants grouped by %s in %s: every key, count and integer sum, and each key’s drill query',
    async (group, zone) => {
      const table = await crosstab({
        rows: [{ field: 'ts', dateGroup: group }],
        totals: [TOTALS[0], TOTALS[5]],
        timeZone: zone,
      });
      const local = `timezone('${zone}', ts)`;
      const rows = await sql(
        `SELECT ${LABEL[group](local)} AS k, count(*) AS n, CAST(sum(big) AS VARCHAR) AS s FROM t GROUP BY 1`,
      );
      const want = new Map(rows.map((r) => [blank(r.k), [Number(r.n), Number(r.s)]]));
      expect(new Map(table.rows.map((r) => [r.key[0], r.total]))).toEqual(want);
      for (const row of table.rows) {
        expect(row.query).toEqual(expect.any(String));
        expect({ key: row.key[0], n: await count(row.query!) }).toEqual({ key: row.key[0], n: row.total[0] });
      }
    },
  );

  it('calendar dates grouped by ISO week keep their own day in any zone (week 53 of 2020)', async () => {
    const table = await crosstab({
      rows: [{ field: 'day', dateGroup: 'week' }],
      totals: [TOTALS[0]],
      timeZone: 'America/New_York',
    });
    const rows = await sql(`SELECT ${LABEL.week('day')} AS k, count(*) AS n FROM t GROUP BY 1`);
    expect(new Map(table.rows.map((r) => [r.key[0], r.total[0]]))).toEqual(
      new Map(rows.map((r) => [String(r.k), Number(r.n)])),
    );
    expect(table.rows.map((r) => r.key[0])).toContain('2020-W53');
    for (const row of table.rows) expect(await count(row.query!)).toBe(row.total[0]);
  });

  it('bins of ±1e12 decimals: each bin’s count, its lower bound, and its drill query', async () => {
    const width = 250_000_000_000;
    const table = await crosstab({ rows: [{ field: 'amt', bin: { width } }], totals: [TOTALS[0]] });
    const rows = await sql(`SELECT floor(amt / ${width}) * ${width} AS k, count(*) AS n FROM t GROUP BY 1`);
    expect(new Map(table.rows.map((r) => [r.key[0], r.total[0]]))).toEqual(
      new Map(rows.map((r) => [num(r.k), Number(r.n)])),
    );
    for (const row of table.rows) expect(await count(row.query!)).toBe(row.total[0]);
  });
});

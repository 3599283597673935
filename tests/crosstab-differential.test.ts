import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { rpcClient } from './support/http';
import { runCli } from './support/quarry-process';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * CROSSTAB.EXECUTE (format json, over JSON-RPC on a started server, data loaded by the real CLI) against
 * SQL written here by hand on DuckDB, value by value: every row key, column key, cell, row total, column
 * total, subtotal and grand total of each shape, on seeded adversarial data (keys blank, spaced, escaped,
 * quoted, unicode and query syntax; decimals at ±999999999999.99 and with 16 significant digits; integers
 * near 2^53 whose sums pass it; instants at daylight-saving edges in Paris and New York; ISO week 53).
 * Then every row's and column's drill query, and the cells' of the first rows, is run through
 * QUERIES.EXECUTE as "(query) AND (row query) AND (column query)" and must count exactly the cell.
 *
 * How values compare (docs/api.md, DESIGN "Exactness": JSON carries every number as computed):
 * - counts, distinct counts, sums of binary-exact decimals (multiples of 0.25) and Min/Max exactly, Min
 *   and Max also as a value present in the data;
 * - integer sums past 2^53 as DuckDB's HUGEINT (text) turned into the nearest double, which is what a
 *   JSON number carrying the exact integer parses to;
 * - other doubles (float sums, averages, medians, percentiles, deviations) within 1e-14 of the larger of
 *   the value and the magnitudes it is made of (Σ|x| for a sum, Σ|x|/n for an average, max|x| for an
 *   order statistic or deviation): summation order cannot move a value that far, 12-digit rounding does,
 *   and each test checks that rounding its expected values to 12 digits would fail.
 */

type KeyPart = string | number | null;
type Key = KeyPart[];
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

/** Text keys: undefined is a missing field, null and '' are blanks; the rest must each be its own key. */
const KEYS: Array<string | null | undefined> = [
  'alpha',
  'alpha ',
  ' alpha',
  'alpha  ',
  'Alpha',
  ' ',
  '',
  null,
  undefined,
  '(blank)',
  'back\\slash',
  '\\',
  'ends\\',
  '"quoted"',
  "it's",
  'a:b',
  'x=1',
  '=lead',
  'star*',
  '*',
  'a:b=c* (d) [e] {f}',
  'AND',
  'NOT',
  'TO',
  '-minus',
  '+plus',
  '~tilde?',
  'Ünïcödé',
  'e\u0301',
  '\u00e9',
  '😀 emoji',
  '日本語',
  '中文 key',
  'tab\there',
  'no-break\u00a0',
];
const GROUPS: Array<string | null | undefined> = ['x', 'x ', 'Y', '', null, undefined, '(blank)', 'ü'];
const SIDES = ['p', 'q', 'p:q', null];

/** Decimals a double does not hold exactly, with 15-17 significant digits. */
const AMOUNTS = [
  999999999999.99,
  -999999999999.99,
  6.431720430107525,
  0.1,
  0.2,
  -0.3,
  1 / 3,
  2 / 3,
  123456789.12345679,
  0,
  3.141592653589793,
  -271828.1828459045,
  99.99,
  1e-9,
  4503599627370.497,
];
/** 2^53 - 1: the integers loaded stay within it; their sums go past it. */
const MAX_SAFE = 9007199254740991;

/** Instants where date grouping breaks: DST changes in Paris and New York, ISO week 53, year ends. */
function instants(): number[] {
  const out: number[] = [];
  const every = (from: string, to: string, minutes: number) => {
    for (let t = Date.parse(from); t <= Date.parse(to); t += minutes * 60_000) out.push(t);
  };
  every('2021-03-28T00:00:00Z', '2021-03-28T03:00:00Z', 15);
  every('2021-10-31T00:00:00Z', '2021-10-31T02:00:00Z', 15);
  every('2021-03-14T05:00:00Z', '2021-03-14T08:00:00Z', 30);
  every('2021-11-07T04:00:00Z', '2021-11-07T07:00:00Z', 30);
  for (const s of [
    '2020-12-31T22:30:00Z',
    '2020-12-31T23:30:00Z',
    '2021-01-01T00:30:00Z',
    '2021-01-03T22:59:59Z',
    '2021-01-03T23:30:00Z',
    '2021-01-04T04:30:00Z',
    '2026-12-31T23:59:59Z',
    '2027-01-01T00:30:00Z',
    '2027-01-04T03:00:00Z',
    '2015-12-31T12:00:00Z',
    '2019-12-29T23:30:00Z',
    '2021-06-30T22:00:00Z',
    '2021-09-30T23:00:00Z',
    '2021-12-31T23:00:00Z',
    '2021-12-31T23:00:00.500Z',
  ])
    out.push(Date.parse(s));
  return out;
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

/** An instant as a file might write it: with Z, or in the offset of some zone. */
function written(ms: number, r: () => number): string {
  const iso = new Date(ms).toISOString();
  const offsetMin = [0, 60, 120, -300, -240, 330][Math.floor(r() * 6)];
  if (offsetMin === 0) return iso;
  const local = new Date(ms + offsetMin * 60_000).toISOString().replace(/Z$/, '');
  return `${local}${offsetMin >= 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offsetMin) / 60))}:${pad(Math.abs(offsetMin) % 60)}`;
}

const DAYS = [
  '2015-12-31',
  '2016-01-03',
  '2019-12-30',
  '2020-12-31',
  '2021-01-01',
  '2021-01-02',
  '2021-01-03',
  '2021-01-04',
  '2021-03-28',
  '2021-10-31',
  '2021-11-07',
  '2024-12-30',
  '2026-12-31',
  '2027-01-01',
  '2027-01-03',
  '2027-01-04',
];

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-differential-'));
const ADV = path.join(work, 'adv.jsonl');
const BUG = path.join(work, 'bug.jsonl');
const DAILY = path.join(work, 'daily.jsonl');

/** Values loaded into each numeric field, for "Min and Max are values of the data". */
const loaded = { amt: new Set<number>(), q: new Set<number>(), big: new Set<number>(), i: new Set<number>() };

function writeAdversarial(): void {
  const r = random(0x5eed2026);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const stamps = instants();
  const lines: string[] = [];
  for (let n = 0; n < 1600; n++) {
    const rec: Record<string, unknown> = {};
    const k = pick(KEYS);
    if (k !== undefined) rec.k = k;
    const g = pick(GROUPS);
    if (g !== undefined) rec.g = g;
    rec.side = pick(SIDES);
    if (r() < 0.9)
      rec.amt = r() < 0.6 ? pick(AMOUNTS) : (Math.round(r() * 2e14) - 1e14) / 100; /* two decimals, to ±1e12 */
    // Multiples of 0.25 to ±999999999999.75: every partial sum of 1600 of them is a double exactly.
    rec.q = r() < 0.1 ? pick([999999999999.75, -999999999999.75, 0]) : (Math.floor(r() * 8e12) - 4e12) / 4;
    if (r() < 0.95)
      rec.big = r() < 0.15 ? pick([0, -1, 1]) : (r() < 0.6 ? 1 : -1) * (MAX_SAFE - Math.floor(r() * 5000));
    if (r() < 0.92) rec.i = Math.floor(r() * 200) - 60;
    if (r() < 0.95) rec.ts = written(pick(stamps), r);
    if (r() < 0.93) rec.day = pick(DAYS);
    for (const f of ['amt', 'q', 'big', 'i'] as const) if (typeof rec[f] === 'number') loaded[f].add(rec[f]);
    lines.push(JSON.stringify(rec));
  }
  fs.writeFileSync(ADV, lines.join('\n') + '\n');
}

/** The bug report: "alpha " (trailing blank) with 30 records next to its look-alikes. */
const BUG_KEYS: Array<[string | null, number]> = [
  ['alpha ', 30],
  ['alpha', 5],
  [' alpha', 3],
  ['alpha  ', 2],
  ['alpha\\', 4],
  [null, 6],
];

function writeBug(): void {
  const lines: string[] = [];
  for (const [label, n] of BUG_KEYS) for (let i = 0; i < n; i++) lines.push(JSON.stringify({ label, n: i }));
  fs.writeFileSync(BUG, lines.join('\n') + '\n');
}

/** Four years of days (1461) as calendar dates, and an instant every 7 hours over them (5009 periods of hours). */
function writeDaily(): void {
  const lines: string[] = [];
  const start = Date.parse('2021-01-01T00:00:00Z');
  const end = Date.parse('2025-01-01T00:00:00Z');
  for (let t = start, n = 0; t < end; t += 7 * 3_600_000, n++) {
    const rec: Record<string, unknown> = { stamp: new Date(t).toISOString(), n };
    if ((t - start) % 86_400_000 < 7 * 3_600_000) rec.day = new Date(t).toISOString().slice(0, 10);
    lines.push(JSON.stringify(rec));
  }
  fs.writeFileSync(DAILY, lines.join('\n') + '\n');
}

/**
 * The crosstab engine the server runs: DuckDB, or ClickHouse (chDB in-process) when
 * crosstab-differential.clickhouse.test.ts runs this file, so both engines meet the same hand-written SQL.
 */
const PIVOT_ENGINE = (globalThis as { quarryPivotEngine?: string }).quarryPivotEngine ?? 'duckdb';

let stack: Stack;
let analyst: Identity;
let db: DuckDBInstance;
let c: DuckDBConnection;

beforeAll(async () => {
  writeAdversarial();
  writeBug();
  writeDaily();
  stack = await startStackWithData({
    env: { QUARRY_PIVOT_ENGINE: PIVOT_ENGINE },
    extra: async (env) => {
      for (const [name, file] of [
        ['adv', ADV],
        ['bug', BUG],
        ['daily', DAILY],
      ]) {
        const res = await runCli(['index', 'load', name, file], env);
        if (res.code !== 0) throw new Error(`index load ${name}: ${res.stderr}`);
      }
    },
  });
  analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  db = await DuckDBInstance.create();
  c = await db.connect();
  await c.run(`SET TimeZone = 'UTC'`);
  const json = (file: string, columns: string) =>
    `read_json('${file}', format = 'newline_delimited', columns = {${columns}})`;
  await c.run(
    `CREATE TABLE adv AS SELECT k, g, side, amt, q, big, i, CAST(ts AS TIMESTAMPTZ) AS ts, CAST(day AS DATE) AS day
     FROM ${json(ADV, `k: 'VARCHAR', g: 'VARCHAR', side: 'VARCHAR', amt: 'DOUBLE', q: 'DOUBLE', big: 'BIGINT', i: 'BIGINT', ts: 'VARCHAR', day: 'VARCHAR'`)}`,
  );
  await c.run(`CREATE TABLE bug AS SELECT * FROM ${json(BUG, `label: 'VARCHAR', n: 'BIGINT'`)}`);
  await c.run(
    `CREATE TABLE daily AS SELECT CAST(stamp AS TIMESTAMPTZ) AS stamp, CAST(day AS DATE) AS day, n
     FROM ${json(DAILY, `stamp: 'VARCHAR', day: 'VARCHAR', n: 'BIGINT'`)}`,
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

async function crosstab(index: string, params: Record<string, unknown>): Promise<JsonTable> {
  const res = await stack.call<{ contentType: string; data: JsonTable }>(analyst, 'CROSSTAB.EXECUTE', {
    index,
    format: 'json',
    cache: false,
    ...params,
  });
  if (!res.data) throw new Error(`CROSSTAB.EXECUTE ${JSON.stringify(params)}: ${JSON.stringify(res.error)}`);
  expect(res.data.contentType).toBe('application/json');
  return res.data.data;
}

/** QUERIES.EXECUTE's total for a query, or the error as text. */
async function count(index: string, query: string): Promise<number | string> {
  const res = await stack.call<{ total: number }>(analyst, 'QUERIES.EXECUTE', {
    index,
    query,
    pageSize: 1,
    cache: false,
  });
  return res.data ? res.data.total : `error ${JSON.stringify(res.error)}`;
}

/** Runs thunks a few at a time (the server has two cores to share). */
async function inParallel<T>(jobs: Array<() => Promise<T>>, width = 4): Promise<T[]> {
  const out: T[] = new Array<T>(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, jobs.length) }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

/* ---------------------------------------------------------------------------------------------------- */
/* Expected values from DuckDB                                                                          */
/* ---------------------------------------------------------------------------------------------------- */

type Kind = 'exact' | 'member' | 'bigint' | 'close';
interface Measure {
  /** The CROSSTAB.EXECUTE total. */
  total: Record<string, unknown>;
  /** The same aggregate in SQL over the table's columns. */
  sql: string;
  kind: Kind;
  /** For 'close': the magnitude the tolerance is relative to (at least the value itself). */
  scale?: string;
  /** For 'member': the loaded field whose values Min/Max must come from. */
  field?: keyof typeof loaded;
}

const COUNT: Measure = { total: { aggregationType: 'Count' }, sql: 'count(*)', kind: 'exact' };
const sumClose = (f: string): Measure => ({
  total: { aggregationType: 'Sum', field: f },
  sql: `fsum(${f})`,
  kind: 'close',
  scale: `fsum(abs(${f}))`,
});
const sumExact = (f: string): Measure => ({
  total: { aggregationType: 'Sum', field: f },
  sql: `sum(${f})`,
  kind: 'exact',
});
const sumBig = (f: string): Measure => ({
  total: { aggregationType: 'Sum', field: f },
  sql: `CAST(sum(${f}) AS VARCHAR)`,
  kind: 'bigint',
});
const average = (f: string): Measure => ({
  total: { aggregationType: 'Average', field: f },
  sql: `fsum(${f}) / count(${f})`,
  kind: 'close',
  scale: `fsum(abs(${f})) / count(${f})`,
});
const minOf = (f: keyof typeof loaded): Measure => ({
  total: { aggregationType: 'Min', field: f },
  sql: `min(${f})`,
  kind: 'member',
  field: f,
});
const maxOf = (f: keyof typeof loaded): Measure => ({
  total: { aggregationType: 'Max', field: f },
  sql: `max(${f})`,
  kind: 'member',
  field: f,
});
const distinctText = (f: string): Measure => ({
  total: { aggregationType: 'CountDistinct', field: f },
  sql: `count(DISTINCT nullif(${f}, ''))`,
  kind: 'exact',
});

interface Shape {
  index: 'adv' | 'daily';
  /** The crosstab's rows and columns parameters. */
  rows: Array<string | Record<string, unknown>>;
  columns?: Array<Record<string, unknown>>;
  /** The key of each axis in SQL, as Quarry's JSON writes it (blank text null, date groups as text). */
  rowSql: string[];
  colSql?: string[];
  measures: Measure[];
  subtotals?: boolean;
  timeZone?: string;
  /** The crosstab's query, and the same filter in SQL. */
  query?: string;
  where?: string;
  /** Drill into the cells of this many first rows (all rows and columns are always drilled). */
  cellRows?: number;
}

type Want = Array<number | null>;
const cellId = (row: Key, col: Key) => JSON.stringify([row, col]);

/** Every cell, row, column, subtotal and grand total the shape must show, computed by GROUPING SETS. */
async function expectedCells(shape: Shape): Promise<{ want: Map<string, Want>; scales: Map<string, Want> }> {
  const rowSql = shape.rowSql;
  const colSql = shape.colSql ?? [];
  const R = rowSql.length;
  const C = colSql.length;
  const rowAlias = rowSql.map((_, i) => `r${i}`);
  const colAlias = colSql.map((_, j) => `c${j}`);
  const depths = (n: number) => (shape.subtotals ? Array.from({ length: n + 1 }, (_, i) => i) : [...new Set([0, n])]);
  const sets = depths(R).flatMap((i) =>
    depths(C).map((j) => `(${[...rowAlias.slice(0, i), ...colAlias.slice(0, j)].join(', ')})`),
  );
  const table = shape.index;
  const text = `WITH base AS (
      SELECT *, ${[...rowSql.map((s, i) => `${s} AS r${i}`), ...colSql.map((s, j) => `${s} AS c${j}`)].join(', ')}
      FROM ${table} ${shape.where ? `WHERE ${shape.where}` : ''})
    SELECT ${[...rowAlias, ...colAlias].join(', ')},
      ${[...rowAlias, ...colAlias].map((a) => `GROUPING(${a}) AS g_${a}`).join(', ')},
      ${shape.measures.map((m, i) => `${m.sql} AS m${i}, ${m.scale ?? 'NULL'} AS s${i}`).join(', ')}
    FROM base GROUP BY GROUPING SETS (${sets.join(', ')})`;
  const want = new Map<string, Want>();
  const scales = new Map<string, Want>();
  for (const r of await sql(text)) {
    const part = (a: string): KeyPart => {
      const v = r[a];
      return v === null || v === undefined ? null : typeof v === 'string' ? v : Number(v);
    };
    const rowKey = rowAlias.filter((a) => Number(r[`g_${a}`]) === 0).map(part);
    const colKey = colAlias.filter((a) => Number(r[`g_${a}`]) === 0).map(part);
    const id = cellId(rowKey, colKey);
    if (want.has(id)) throw new Error(`SQL gave ${id} twice`);
    want.set(
      id,
      shape.measures.map((m, i) => {
        const v = r[`m${i}`];
        if (v === null || v === undefined) return null;
        return m.kind === 'bigint' ? Number(BigInt(String(v))) : Number(v);
      }),
    );
    scales.set(
      id,
      shape.measures.map((_, i) => (r[`s${i}`] === null || r[`s${i}`] === undefined ? null : Number(r[`s${i}`]))),
    );
  }
  return { want, scales };
}

const TOLERANCE = 1e-14;
const round12 = (x: number) => Number(x.toPrecision(12));

interface Verdict {
  problems: string[];
  compared: number;
  /** Expected doubles that 12-significant-digit rounding would take out of tolerance. */
  roundingWouldFail: number;
}

function agrees(m: Measure, got: number | null, want: number | null, scale: number | null): boolean {
  if (got === null || want === null) return got === want;
  if (typeof got !== 'number') return false;
  switch (m.kind) {
    case 'exact':
    case 'bigint':
      return got === want;
    case 'member':
      return got === want && loaded[m.field!].has(got);
    case 'close':
      return Math.abs(got - want) <= TOLERANCE * Math.max(Math.abs(want), scale ?? 0);
  }
}

function wouldRoundingFail(m: Measure, want: number | null, scale: number | null): boolean {
  if (want === null || !Number.isFinite(want)) return false;
  return !agrees({ ...m, kind: m.kind === 'member' ? 'exact' : m.kind }, round12(want), want, scale);
}

/** Quarry's table against the expected cells: keys, values, and nothing more or less. */
function compareTable(shape: Shape, got: JsonTable, want: Map<string, Want>, scales: Map<string, Want>): Verdict {
  const problems: string[] = [];
  let compared = 0;
  let roundingWouldFail = 0;
  const seen = new Set<string>();
  const check = (where: string, id: string, values: Array<number | null> | undefined) => {
    if (seen.has(id)) problems.push(`${where} ${id}: shown twice`);
    seen.add(id);
    const w = want.get(id);
    if (!values || values.length !== shape.measures.length) {
      problems.push(`${where} ${id}: ${JSON.stringify(values)} is not one value per total`);
      return;
    }
    if (!w) {
      // A combination without records: an empty cell (a count may say 0).
      if (values.some((v, i) => v !== null && !(v === 0 && shape.measures[i].total.aggregationType !== 'Sum')))
        problems.push(`${where} ${id}: ${JSON.stringify(values)} but no record has that key`);
      return;
    }
    const s = scales.get(id)!;
    values.forEach((v, i) => {
      compared++;
      if (wouldRoundingFail(shape.measures[i], w[i], s[i])) roundingWouldFail++;
      if (!agrees(shape.measures[i], v, w[i], s[i]))
        problems.push(
          `${where} ${id} ${JSON.stringify(shape.measures[i].total)}: got ${JSON.stringify(v)}, DuckDB ${JSON.stringify(w[i])}`,
        );
    });
  };
  for (const row of got.rows) {
    got.columns.forEach((col, j) => check('cell', cellId(row.key, col), row.cells[j]));
    check(row.subtotal ? 'subtotal' : 'row', cellId(row.key, []), row.total);
    if (row.key.length < shape.rowSql.length !== (row.subtotal === true))
      problems.push(`row ${JSON.stringify(row.key)}: subtotal flag ${String(row.subtotal)} for its key length`);
  }
  got.columns.forEach((col, j) => check('column total', cellId([], col), got.columnTotals[j]));
  check('grand total', cellId([], []), got.grandTotal);
  // Every expected row, column and cell is shown (empty cells aside, which SQL does not list).
  const rowIds = new Set(got.rows.map((r) => JSON.stringify(r.key)));
  const colIds = new Set(got.columns.map((k) => JSON.stringify(k)));
  for (const id of want.keys()) {
    if (seen.has(id)) continue;
    const [row, col] = JSON.parse(id) as [Key, Key];
    const what =
      !rowIds.has(JSON.stringify(row)) && row.length ? 'row' : !colIds.has(JSON.stringify(col)) ? 'column' : 'cell';
    problems.push(`${what} ${id} is in the data (${JSON.stringify(want.get(id))}) but not in the table`);
  }
  return { problems, compared, roundingWouldFail };
}

/** Each row's and column's drill query, and those of the first rows' cells, counted by QUERIES.EXECUTE. */
async function drillProblems(shape: Shape, got: JsonTable): Promise<{ problems: string[]; drilled: number }> {
  const where = (q: string) => (shape.query ? `(${shape.query}) AND (${q})` : q);
  const jobs: Array<() => Promise<string | null>> = [];
  const expectCount = (label: string, query: string | null | undefined, want: number | null) => {
    if (query === null || query === undefined) {
      jobs.push(async () => `${label}: no drill query (${JSON.stringify(query)})`);
      return;
    }
    jobs.push(async () => {
      const n = await count(shape.index, where(query));
      return n === (want ?? 0) ? null : `${label}: ${JSON.stringify(where(query))} counts ${n}, the table ${want}`;
    });
  };
  for (const row of got.rows) expectCount(`row ${JSON.stringify(row.key)}`, row.query, row.total[0]);
  got.columns.forEach((col, j) =>
    expectCount(`column ${JSON.stringify(col)}`, got.columnQueries[j], got.columnTotals[j][0]),
  );
  for (const row of got.rows.slice(0, shape.cellRows ?? 30)) {
    if (row.query === null || row.query === undefined) continue;
    got.columns.forEach((col, j) => {
      const cq = got.columnQueries[j];
      if (cq === null || cq === undefined) return;
      expectCount(`cell ${cellId(row.key, col)}`, `(${row.query}) AND (${cq})`, row.cells[j][0]);
    });
  }
  const problems = (await inParallel(jobs)).filter((p): p is string => p !== null);
  return { problems, drilled: jobs.length };
}

const stats = { shapes: 0, values: 0, drills: 0 };

/** Runs a shape: the table against SQL, then every drill query; all problems reported at once. */
async function differential(shape: Shape, opts: { drill?: boolean } = {}): Promise<Verdict & { rounded: Verdict }> {
  const got = await crosstab(shape.index, {
    rows: shape.rows,
    ...(shape.columns ? { columns: shape.columns } : {}),
    totals: shape.measures.map((m) => m.total),
    ...(shape.subtotals ? { subtotals: true } : {}),
    ...(shape.timeZone ? { timeZone: shape.timeZone } : {}),
    ...(shape.query ? { query: shape.query } : {}),
  });
  const { want, scales } = await expectedCells(shape);
  const verdict = compareTable(shape, got, want, scales);
  const drilled = opts.drill === false ? { problems: [], drilled: 0 } : await drillProblems(shape, got);
  stats.shapes++;
  stats.values += verdict.compared;
  stats.drills += drilled.drilled;
  const problems = [...verdict.problems, ...drilled.problems];
  // Shown in full when few, else the first 40 and how many more.
  expect(problems.length > 40 ? [...problems.slice(0, 40), `… and ${problems.length - 40} more`] : problems).toEqual(
    [],
  );
  expect(verdict.compared).toBeGreaterThan(0);
  // The same table with every number rounded to 12 significant digits, through the same comparison.
  const round = (v: number | null) => (v === null ? null : round12(v));
  const rounded = compareTable(
    shape,
    {
      ...got,
      rows: got.rows.map((r) => ({ ...r, cells: r.cells.map((cell) => cell.map(round)), total: r.total.map(round) })),
      columnTotals: got.columnTotals.map((t) => t.map(round)),
      grandTotal: got.grandTotal.map(round),
    },
    want,
    scales,
  );
  return { ...verdict, rounded };
}

/* ---------------------------------------------------------------------------------------------------- */
/* The shapes                                                                                           */
/* ---------------------------------------------------------------------------------------------------- */

const blank = (f: string) => `nullif(${f}, '')`;

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
const GRAINS = Object.keys(LABEL);
const ZONES = ['Europe/Paris', 'America/New_York'];

/** Bin k of [o + k·w, o + (k+1)·w), keyed by its lower bound. */
const binKey = (x: string, width: number, origin = 0) =>
  `CAST(${origin} + floor((CAST(${x} AS DOUBLE) - ${origin}) / ${width}) * ${width} AS DOUBLE)`;

describe(`CROSSTAB.EXECUTE (${PIVOT_ENGINE}) against DuckDB by hand, differential, on generated adversarial data`, () => {
  it('rows by an adversarial text key: Count, Sum, Average, Min, Max, CountDistinct, Median, Percentile, StdDev', async () => {
    const verdict = await differential({
      index: 'adv',
      rows: ['k'],
      rowSql: [blank('k')],
      measures: [
        COUNT,
        sumClose('amt'),
        average('amt'),
        minOf('amt'),
        maxOf('amt'),
        sumExact('q'),
        sumBig('big'),
        average('big'),
        minOf('big'),
        maxOf('q'),
        distinctText('g'),
        { total: { aggregationType: 'CountDistinct', field: 'amt' }, sql: 'count(DISTINCT amt)', kind: 'exact' },
        {
          total: { aggregationType: 'Median', field: 'amt' },
          sql: 'median(amt)',
          kind: 'close',
          scale: 'max(abs(amt))',
        },
        {
          total: { aggregationType: 'Percentile', field: 'q', percentile: 90 },
          sql: 'quantile_cont(q, 0.9)',
          kind: 'close',
          scale: 'max(abs(q))',
        },
        {
          total: { aggregationType: 'StdDev', field: 'amt' },
          sql: 'stddev_samp(amt)',
          kind: 'close',
          scale: 'max(abs(amt))',
        },
        { total: { aggregationType: 'Count', field: 'amt' }, sql: 'count(amt)', kind: 'exact' },
      ],
    });
    expect(verdict.roundingWouldFail).toBeGreaterThan(20);
    // The comparison has the power to see 12-digit rounding: the rounded table fails it.
    expect(verdict.rounded.problems.length).toBeGreaterThan(20);
  });

  it('rows × columns with subtotals, under a query: every cell, subtotal row and column, total and drill', async () => {
    const verdict = await differential({
      index: 'adv',
      query: 'i:>=0 OR NOT i:*',
      where: 'i >= 0 OR i IS NULL',
      rows: ['g', 'k'],
      rowSql: [blank('g'), blank('k')],
      columns: [{ field: 'day', dateGroup: 'year' }, { field: 'side' }],
      colSql: [LABEL.year('day'), blank('side')],
      subtotals: true,
      measures: [COUNT, sumExact('q'), average('amt'), minOf('amt'), maxOf('amt'), sumBig('big'), distinctText('k')],
      cellRows: 30,
    });
    expect(verdict.roundingWouldFail).toBeGreaterThan(100);
    expect(verdict.rounded.problems.length).toBeGreaterThan(100);
  });

  it.each(ZONES.flatMap((zone) => GRAINS.map((grain) => [grain, zone] as const)))(
    'instants by %s in %s × a text column: keys, cells, totals and drill queries',
    async (grain, zone) => {
      const verdict = await differential({
        index: 'adv',
        rows: [{ field: 'ts', dateGroup: grain }],
        rowSql: [LABEL[grain](`timezone('${zone}', ts)`)],
        columns: [{ field: 'side' }],
        colSql: [blank('side')],
        timeZone: zone,
        measures: [COUNT, sumExact('q'), average('amt'), minOf('q'), maxOf('amt'), sumBig('big')],
        cellRows: 30,
      });
      expect(verdict.roundingWouldFail).toBeGreaterThan(0);
      expect(verdict.rounded.problems.length).toBeGreaterThan(0);
    },
  );

  it.each(GRAINS.filter((g) => g !== 'hour' && g !== 'hourOfDay'))(
    'calendar dates by %s in America/New_York stay their own day (ISO week 53, year ends)',
    async (grain) => {
      await differential({
        index: 'adv',
        rows: [{ field: 'day', dateGroup: grain }],
        rowSql: [LABEL[grain]('day')],
        timeZone: 'America/New_York',
        measures: [COUNT, sumExact('q'), sumBig('big')],
      });
    },
  );

  it('date groups on columns: calendar weeks × hours of the day in Paris, with subtotals over two row levels', async () => {
    await differential({
      index: 'adv',
      rows: [
        { field: 'day', dateGroup: 'week' },
        { field: 'ts', dateGroup: 'dayOfWeek' },
      ],
      rowSql: [LABEL.week('day'), LABEL.dayOfWeek(`timezone('Europe/Paris', ts)`)],
      columns: [{ field: 'ts', dateGroup: 'hourOfDay' }],
      colSql: [LABEL.hourOfDay(`timezone('Europe/Paris', ts)`)],
      timeZone: 'Europe/Paris',
      subtotals: true,
      measures: [COUNT, sumExact('q'), maxOf('q')],
      cellRows: 12,
    });
  });

  it('bins [o + k·w, o + (k+1)·w) on an integer field × bins of ±1e12 decimals: keys are lower bounds', async () => {
    await differential({
      index: 'adv',
      rows: [{ field: 'i', bin: { width: 7, origin: 3 } }],
      rowSql: [binKey('i', 7, 3)],
      columns: [{ field: 'q', bin: { width: 250_000_000_000, origin: -125_000_000_000 } }],
      colSql: [binKey('q', 250_000_000_000, -125_000_000_000)],
      measures: [COUNT, sumExact('q'), minOf('i'), maxOf('i'), sumBig('big'), average('amt')],
      cellRows: 40,
    });
  });

  it('the bug report: "alpha " (trailing blank, 30 records) drills to 30, alone and after AND', async () => {
    const got = await crosstab('bug', { rows: ['label'], totals: [{ aggregationType: 'Count' }] });
    const want = new Map(
      (await sql(`SELECT nullif(label, '') AS k, count(*) AS n FROM bug GROUP BY 1`)).map((r) => [
        JSON.stringify(r.k),
        Number(r.n),
      ]),
    );
    expect(new Map(got.rows.map((r) => [JSON.stringify(r.key[0]), r.total[0]]))).toEqual(want);
    const row = got.rows.find((r) => r.key[0] === 'alpha ');
    expect(row?.total[0]).toBe(30);
    expect(row?.query).toEqual(expect.any(String));
    const q = row!.query!;
    const variants = [q, `* AND ${q}`, `${q} AND *`, `(*) AND (${q})`, `(${q}) AND (*)`, `n:>=0 AND ${q}`, `(${q})`];
    const counts = await inParallel(variants.map((v) => () => count('bug', v)));
    expect(Object.fromEntries(variants.map((v, i) => [v, counts[i]]))).toEqual(
      Object.fromEntries(variants.map((v) => [v, 30])),
    );
    // And every look-alike key counts its own records only.
    const drills = await inParallel(got.rows.map((r) => () => count('bug', r.query ?? 'NO QUERY')));
    expect(got.rows.map((r, i) => [r.key[0], drills[i]])).toEqual(got.rows.map((r) => [r.key[0], r.total[0]]));
  });

  it('repeating groups over four years (1461 days, 5009 seven-hour instants): every row has a query that counts it', async () => {
    const shapes: Shape[] = [
      { grain: 'dayOfWeek', field: 'day', zone: 'UTC' },
      { grain: 'dayOfWeek', field: 'stamp', zone: 'Europe/Paris' },
      { grain: 'monthOfYear', field: 'stamp', zone: 'America/New_York' },
      { grain: 'hourOfDay', field: 'stamp', zone: 'America/New_York' },
    ].map(({ grain, field, zone }) => ({
      index: 'daily' as const,
      rows: [{ field, dateGroup: grain }],
      rowSql: [LABEL[grain](field === 'day' ? 'day' : `timezone('${zone}', stamp)`)],
      timeZone: zone,
      measures: [COUNT, sumExact('n')],
    }));
    // And a repeating group on columns against a calendar one on rows.
    shapes.push({
      index: 'daily',
      rows: [{ field: 'day', dateGroup: 'year' }],
      rowSql: [LABEL.year('day')],
      columns: [{ field: 'day', dateGroup: 'dayOfWeek' }],
      colSql: [LABEL.dayOfWeek('day')],
      measures: [COUNT, sumExact('n')],
    });
    for (const shape of shapes) await differential(shape);
  });

  it('Other (N) rows and columns over adversarial text keys: every total against SQL over the keys not kept, and their drill queries', async () => {
    const measures = [COUNT, sumExact('q'), average('amt'), distinctText('g'), maxOf('amt')];
    const got = await crosstab('adv', {
      rows: ['k'],
      columns: [{ field: 'g' }],
      totals: measures.map((m) => m.total),
      rowLimit: 6,
      columnLimit: 2,
      otherRow: true,
      otherColumn: true,
    });
    const literal = (v: KeyPart) => `'${String(v).replace(/'/g, "''")}'`;
    // Records whose key is none of those shown (a blank key is kept only when shown).
    const notShown = (col: string, kept: KeyPart[]) => {
      const listed = kept.filter((v) => v !== null);
      const member = `${listed.length ? `coalesce(${blank(col)} IN (${listed.map(literal).join(', ')}), false)` : 'false'}${kept.includes(null) ? ` OR ${blank(col)} IS NULL` : ''}`;
      return `NOT (${member})`;
    };
    const other = got.rows[got.rows.length - 1] as JsonRow & { other?: number };
    const keptRows = got.rows.slice(0, -1).map((r) => r.key[0]);
    const keptColumns = got.columns.slice(0, -1).map((c) => c[0]);
    expect(other.key).toEqual([]);
    expect(other.other).toBeGreaterThan(0);
    expect(got.columns[got.columns.length - 1]).toEqual([]);
    const aggregate = async (where: string) => {
      const [r] = await sql(
        `SELECT ${measures.map((m, i) => `${m.sql} AS m${i}, ${m.scale ?? 'NULL'} AS s${i}`).join(', ')} FROM adv WHERE ${where}`,
      );
      const num = (v: unknown, m?: Measure) =>
        v === null || v === undefined ? null : m?.kind === 'bigint' ? Number(BigInt(String(v))) : Number(v);
      return { want: measures.map((m, i) => num(r[`m${i}`], m)), scale: measures.map((_, i) => num(r[`s${i}`])) };
    };
    const problems: string[] = [];
    const compare = async (where: string, values: Array<number | null>, label: string) => {
      const { want, scale } = await aggregate(where);
      measures.forEach((m, i) => {
        // No record at all: an empty cell, a count of 0 aside.
        const w = want[0] === 0 && i > 0 ? null : want[i];
        if (!agrees(m, values[i], w, scale[i]))
          problems.push(
            `${label} ${JSON.stringify(m.total)}: got ${JSON.stringify(values[i])}, DuckDB ${JSON.stringify(w)}`,
          );
      });
    };
    const rowsOut = notShown('k', keptRows);
    const columnsOut = notShown('g', keptColumns);
    await compare(rowsOut, other.total, 'Other row total');
    await compare(`${rowsOut} AND ${columnsOut}`, other.cells[other.cells.length - 1], 'Other x Other');
    await compare(columnsOut, got.columnTotals[got.columnTotals.length - 1], 'Total x Other column');
    for (const [j, c] of keptColumns.entries())
      await compare(
        `${rowsOut} AND ${c === null ? `${blank('g')} IS NULL` : `${blank('g')} = ${literal(c)}`}`,
        other.cells[j],
        `Other x ${JSON.stringify(c)}`,
      );
    for (const row of got.rows.slice(0, -1))
      await compare(
        `${row.key[0] === null ? `${blank('k')} IS NULL` : `${blank('k')} = ${literal(row.key[0])}`} AND ${columnsOut}`,
        row.cells[row.cells.length - 1],
        `${JSON.stringify(row.key)} x Other`,
      );
    expect(problems).toEqual([]);
    // The drill queries of the Other row and column, and of their corner, count exactly their records.
    const otherColumnQuery = got.columnQueries[got.columnQueries.length - 1]!;
    expect([
      await count('adv', other.query!),
      await count('adv', otherColumnQuery),
      await count('adv', `(${other.query!}) AND (${otherColumnQuery})`),
    ]).toEqual([
      other.total[0],
      got.columnTotals[got.columnTotals.length - 1][0],
      other.cells[other.cells.length - 1][0],
    ]);
  });

  it('compared what it set out to compare', () => {
    // A differential that silently compared nothing would pass: the counts are part of the test.
    expect(stats.shapes).toBeGreaterThan(30);
    expect(stats.values).toBeGreaterThan(20_000);
    expect(stats.drills).toBeGreaterThan(3_000);
  });
});

describe(`verify: true on ${PIVOT_ENGINE}`, () => {
  const shapes: Array<[string, Record<string, unknown>]> = [
    ['subtotals', { rows: ['g', 'side'], totals: [{ aggregationType: 'Sum', field: 'amt' }], subtotals: true }],
    [
      'holistic totals, a row limit and an Other row',
      {
        rows: ['k'],
        columns: [{ field: 'side' }],
        totals: [
          { aggregationType: 'Median', field: 'q' },
          { aggregationType: 'CountDistinct', field: 'i' },
        ],
        rowLimit: 3,
        otherRow: true,
      },
    ],
    [
      'a period comparison',
      {
        rows: [{ field: 'day', dateGroup: 'month' }],
        totals: [{ aggregationType: 'Sum', field: 'amt', compare: { to: 'previousPeriod' } }],
      },
    ],
  ];

  it.each(shapes)('%s: every cell agrees with its recomputation, and provenance names the engine', async (_n, p) => {
    const res = await rpcClient(stack.quarry.baseUrl, analyst.token).call('CROSSTAB.EXECUTE', {
      index: 'adv',
      format: 'json',
      verify: true,
      ...p,
    });
    const body = res.json as {
      result?: { meta: { verify?: { cells: number; mismatched: number }; provenance?: { engine: string } } };
      error?: unknown;
    };
    expect(body.error).toBeUndefined();
    expect(body.result!.meta.provenance?.engine).toBe(PIVOT_ENGINE);
    expect(body.result!.meta.verify?.mismatched).toBe(0);
    expect(body.result!.meta.verify!.cells).toBeGreaterThan(3);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { createIdentity, type Identity } from './support/identities';
import { attr, elements, text } from './support/html-table';
import { parse as parseHtml } from 'parse5';
import { movies, type Rec } from './support/datasets';
import { runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

/*
 * "Show values as", subtotals, order and limits, JSON and CSV (docs/api.md, CROSSTAB.EXECUTE), over
 * JSON-RPC on movies.json, every number compared with plain JS computed here from the source file.
 */

type Key = Array<string | number | boolean | null>;
interface Measure {
  agg: 'Sum' | 'Count' | 'Average' | 'Min' | 'Max';
  field?: string;
  /** A dynamic view: Count of distinct values of this field. */
  distinct?: string;
  showAs?: string;
}
interface JsonRow {
  key: Key;
  cells: Array<Array<number | null>>;
  total: Array<number | null>;
  subtotal?: true;
}
interface JsonTable {
  rowFields: string[];
  columnFields: string[];
  measures: Array<{ name: string; aggregationType: string; field?: string; dynamicView?: string; showAs: string }>;
  columns: Key[];
  rows: JsonRow[];
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
  rowsOmitted: number;
  columnsOmitted: number;
}

const MOVIES = movies();
const VIEWS: Record<string, string> = { Director: 'Directors', Distributor: 'Distributors' };

const blankOf = (v: unknown): string | number | boolean | null =>
  v === undefined || v === null || v === '' ? null : (v as string | number | boolean);

function measureOf(records: Rec[], m: Measure): number | null {
  if (m.distinct) return new Set(records.map((r) => blankOf(r[m.distinct as string])).filter((v) => v !== null)).size;
  if (m.agg === 'Count')
    return m.field ? records.filter((r) => blankOf(r[m.field as string]) !== null).length : records.length;
  const xs = records.map((r) => r[m.field as string]).filter((v): v is number => typeof v === 'number');
  if (xs.length === 0) return null;
  if (m.agg === 'Sum') return xs.reduce((a, b) => a + b, 0);
  if (m.agg === 'Average') return xs.reduce((a, b) => a + b, 0) / xs.length;
  return m.agg === 'Min' ? Math.min(...xs) : Math.max(...xs);
}

/** The plain-JS value of a measure over the records under a row key prefix and a column key prefix. */
function model(records: Rec[], rows: string[], columns: string[]) {
  const under = (rk: Key, ck: Key) =>
    records.filter(
      (r) => rk.every((v, i) => blankOf(r[rows[i]]) === v) && ck.every((v, i) => blankOf(r[columns[i]]) === v),
    );
  const cache = new Map<string, Rec[]>();
  const recs = (rk: Key, ck: Key) => {
    const k = JSON.stringify([rk, ck]);
    let hit = cache.get(k);
    if (!hit) cache.set(k, (hit = under(rk, ck)));
    return hit;
  };
  // A cell, total or subtotal where no record falls is empty; only the grand total counts 0 records.
  const value = (rk: Key, ck: Key, m: Measure) => {
    const r = recs(rk, ck);
    return r.length === 0 && rk.length + ck.length > 0 ? null : measureOf(r, m);
  };
  return {
    raw: value,
    shown(rk: Key, ck: Key, m: Measure): number | null {
      const v = value(rk, ck, m);
      const den =
        m.showAs === 'percentOfGrandTotal'
          ? value([], [], m)
          : m.showAs === 'percentOfRowTotal'
            ? value(rk, [], m)
            : m.showAs === 'percentOfColumnTotal'
              ? value([], ck, m)
              : undefined;
      if (den === undefined) return v;
      return v === null || den === null || den === 0 ? null : (v / den) * 100;
    },
  };
}

/** Label order: blank last, text case-insensitively. */
function byLabel(a: Key[number], b: Key[number]): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a).toLowerCase();
  const y = String(b).toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

const distinctKeys = (records: Rec[], fields: string[]): Key[] => {
  const seen = new Map<string, Key>();
  for (const r of records) {
    const k = fields.map((f) => blankOf(r[f]));
    seen.set(JSON.stringify(k), k);
  }
  return [...seen.values()];
};

/** Full keys in label order, level by level. */
const labelOrder = (keys: Key[]) =>
  [...keys].sort((a, b) => {
    for (let i = 0; i < a.length; i++) {
      const c = byLabel(a[i], b[i]);
      if (c !== 0) return c;
    }
    return 0;
  });

const toMeasureParam = (m: Measure) => ({
  aggregationType: m.agg,
  ...(m.field ? { field: m.field } : {}),
  ...(m.distinct ? { dynamicView: VIEWS[m.distinct] } : {}),
  ...(m.showAs ? { showAs: m.showAs } : {}),
});

function expectClose(got: number | null, want: number | null, where: string) {
  if (want === null) {
    if (got !== null) throw new Error(`${where}: expected an empty cell, got ${got}`);
    return;
  }
  if (got === null || Math.abs(got - want) > Math.max(1e-6, Math.abs(want) * 1e-9))
    throw new Error(`${where}: expected ${want}, got ${got}`);
}

describe('CROSSTAB.EXECUTE analytics: show values as, subtotals, order, limits, JSON and CSV', () => {
  let stack: Stack;
  let analyst: Identity;
  let tmp: string;
  const SPARSE: Rec[] = [
    { region: 'East', kind: 'a', amount: 10 },
    { region: 'East', kind: 'b', amount: 30 },
    { region: 'West', kind: 'a', amount: null },
    { region: 'West', kind: 'b', amount: null },
    { region: 'North', kind: 'a', amount: 5 },
    { region: 'North', kind: 'b', amount: -5 },
  ];

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-analytics-'));
    fs.writeFileSync(path.join(tmp, 'sparse.json'), JSON.stringify(SPARSE));
    stack = await startStackWithData({
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'sparse', path.join(tmp, 'sparse.json')], env);
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 120000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  async function crosstab<T>(params: Record<string, unknown>): Promise<{
    contentType: string;
    data: T;
    rowCount: number;
    columnCount: number;
    rowsOmitted?: number;
    columnsOmitted?: number;
  }> {
    const res = await stack.call<{ contentType: string; data: T; rowCount: number; columnCount: number }>(
      analyst,
      'CROSSTAB.EXECUTE',
      params,
    );
    if (res.error) throw new Error(JSON.stringify(res.error));
    return res.data as { contentType: string; data: T; rowCount: number; columnCount: number };
  }

  async function refused(params: Record<string, unknown>): Promise<string> {
    const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', params);
    expect(res.error?.code).toBe(400);
    return (res.error?.data as { detail: string }).detail;
  }

  /** Checks every number of a JSON table against the model: cells, row totals, column totals, grand total. */
  function expectTable(t: JsonTable, records: Rec[], rows: string[], columns: string[], measures: Measure[]) {
    const m = model(records, rows, columns);
    const check = (rk: Key, ck: Key, got: Array<number | null>, where: string) =>
      measures.forEach((x, i) =>
        expectClose(got[i], m.shown(rk, ck, x), `${where} measure ${i} (${x.showAs ?? 'value'})`),
      );
    for (const row of t.rows) {
      t.columns.forEach((ck, c) =>
        check(row.key, ck, row.cells[c], `row ${JSON.stringify(row.key)} column ${JSON.stringify(ck)}`),
      );
      check(row.key, [], row.total, `row ${JSON.stringify(row.key)} Total`);
    }
    t.columns.forEach((ck, c) => check([], ck, t.columnTotals[c], `Total row, column ${JSON.stringify(ck)}`));
    check([], [], t.grandTotal, 'grand total');
  }

  const GENRE_RATING = {
    index: 'movies',
    query: '*',
    rows: ['Major Genre', 'MPAA Rating'],
    columns: [{ field: 'Creative Type' }],
  };

  it.each(['value', 'percentOfGrandTotal', 'percentOfRowTotal', 'percentOfColumnTotal'])(
    'showAs %s on a two-level crosstab: every cell and total as plain JS computes it, 100 where the mode says',
    async (showAs) => {
      const measures: Measure[] = [
        { agg: 'Sum', field: 'Worldwide Gross', showAs },
        { agg: 'Average', field: 'IMDB Rating', showAs },
        { agg: 'Count', distinct: 'Director', showAs },
        { agg: 'Max', field: 'US DVD Sales', showAs },
      ];
      const res = await crosstab<JsonTable>({
        ...GENRE_RATING,
        totals: measures.map(toMeasureParam),
        format: 'json',
        cache: false,
      });
      expect(res.contentType).toBe('application/json');
      const t = res.data;
      expect(t.measures.map((x) => x.showAs)).toEqual(measures.map(() => showAs));
      expect(t.measures[2]).toMatchObject({ aggregationType: 'Count', dynamicView: 'Directors' });
      expect(t.rows.map((r) => r.key)).toEqual(labelOrder(distinctKeys(MOVIES, GENRE_RATING.rows)));
      expect(t.columns).toEqual(labelOrder(distinctKeys(MOVIES, ['Creative Type'])));
      expect(res.rowCount).toBe(t.rows.length);
      expectTable(t, MOVIES, GENRE_RATING.rows, ['Creative Type'], measures);
      // Where the 100s are: the grand total always; the Total column by row; the Total row by column.
      expect(t.grandTotal).toEqual(showAs === 'value' ? expect.any(Array) : [100, 100, 100, 100]);
      const hundreds = (xs: Array<number | null>) => xs.every((v) => v === null || v === 100);
      if (showAs === 'percentOfRowTotal') expect(t.rows.every((r) => hundreds(r.total))).toBe(true);
      if (showAs === 'percentOfColumnTotal') expect(t.columnTotals.every(hundreds)).toBe(true);
      if (showAs === 'percentOfGrandTotal') {
        const sum = t.columnTotals.reduce((a, c) => a + (c[0] ?? 0), 0);
        expect(sum).toBeCloseTo(100, 6);
      }
    },
  );

  it('an empty denominator gives an empty cell, and negative values keep their sign', async () => {
    const res = await crosstab<JsonTable>({
      index: 'sparse',
      rows: ['region'],
      columns: [{ field: 'kind' }],
      totals: [
        { aggregationType: 'Sum', field: 'amount', showAs: 'percentOfRowTotal' },
        { aggregationType: 'Sum', field: 'amount', showAs: 'percentOfColumnTotal' },
      ],
      format: 'json',
    });
    const row = (r: string) => res.data.rows.find((x) => x.key[0] === r) as JsonRow;
    expect(row('West').cells).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(row('West').total).toEqual([null, null]);
    expect(row('East').cells[0][0]).toBe(25);
    expect(row('East').cells[0][1]).toBeCloseTo(200 / 3, 9);
    // Column b sums to 30 + (-5): East's 30 is 120% of it.
    expect(row('East').cells[1]).toEqual([75, 120]);
    // North sums to 0: a 0 denominator is empty too, never Infinity.
    expect(row('North').cells[0][0]).toBeNull();
    expect(row('North').cells[0][1]).toBeCloseTo((5 / 15) * 100, 9);
    expect(row('North').cells[1][1]).toBe(-20);
    expectTable(
      res.data,
      SPARSE,
      ['region'],
      ['kind'],
      [
        { agg: 'Sum', field: 'amount', showAs: 'percentOfRowTotal' },
        { agg: 'Sum', field: 'amount', showAs: 'percentOfColumnTotal' },
      ],
    );
  });

  const SUBTOTAL_MEASURES: Measure[] = [
    { agg: 'Sum', field: 'Worldwide Gross' },
    { agg: 'Average', field: 'IMDB Rating' },
    { agg: 'Count', distinct: 'Director' },
  ];

  it('subtotals on nested rows: after each group, from records (a distinct count is not the sum of its children)', async () => {
    const res = await crosstab<JsonTable>({
      ...GENRE_RATING,
      totals: SUBTOTAL_MEASURES.map(toMeasureParam),
      subtotals: true,
      format: 'json',
    });
    const t = res.data;
    const full = labelOrder(distinctKeys(MOVIES, GENRE_RATING.rows));
    const expected: Key[] = [];
    full.forEach((k, i) => {
      expected.push(k);
      if (i === full.length - 1 || full[i + 1][0] !== k[0]) expected.push([k[0]]);
    });
    expect(t.rows.map((r) => r.key)).toEqual(expected);
    expect(t.rows.filter((r) => r.subtotal).map((r) => r.key)).toEqual(expected.filter((k) => k.length === 1));
    expectTable(t, MOVIES, GENRE_RATING.rows, ['Creative Type'], SUBTOTAL_MEASURES);
    const drama = t.rows.find((r) => r.subtotal && r.key[0] === 'Drama') as JsonRow;
    const dramaChildren = t.rows.filter((r) => !r.subtotal && r.key[0] === 'Drama');
    const childDirectors = dramaChildren.reduce((a, r) => a + (r.total[2] ?? 0), 0);
    expect(drama.total[2]).toBeLessThan(childDirectors);
    expect(drama.total[2]).toBe(model(MOVIES, GENRE_RATING.rows, []).raw(['Drama'], [], SUBTOTAL_MEASURES[2]));
    // An Average subtotal is the average of the records, not of the children's averages.
    const meanOfMeans = dramaChildren.reduce((a, r) => a + (r.total[1] ?? 0), 0) / dramaChildren.length;
    expect(Math.abs((drama.total[1] ?? 0) - meanOfMeans)).toBeGreaterThan(1e-6);
    expect(res.rowCount).toBe(expected.length);
    // Without a dynamic view the engine rolls subtotals up from the pre-aggregated cells instead: same rows, same numbers.
    const summed = await crosstab<JsonTable>({
      ...GENRE_RATING,
      totals: SUBTOTAL_MEASURES.slice(0, 2).map(toMeasureParam),
      subtotals: true,
      format: 'json',
    });
    expect(summed.data.rows.map((r) => r.key)).toEqual(expected);
    expectTable(summed.data, MOVIES, GENRE_RATING.rows, ['Creative Type'], SUBTOTAL_MEASURES.slice(0, 2));
  });

  it('subtotals on nested columns, and with a single level a no-op', async () => {
    const measures: Measure[] = [{ agg: 'Count' }, { agg: 'Count', distinct: 'Director' }];
    const res = await crosstab<JsonTable>({
      index: 'movies',
      query: '(Major Genre):(Drama OR Musical OR Western)',
      rows: ['Source'],
      columns: [{ field: 'Major Genre' }, { field: 'MPAA Rating' }],
      totals: measures.map(toMeasureParam),
      subtotals: true,
      format: 'json',
    });
    const records = MOVIES.filter((r) => ['Drama', 'Musical', 'Western'].includes(r['Major Genre'] as string));
    const subtotalColumns = res.data.columns.filter((c) => c.length === 1);
    expect(subtotalColumns).toEqual([['Drama'], ['Musical'], ['Western']]);
    // Each subtotal column right after its group.
    const at = (k: Key) => res.data.columns.findIndex((c) => JSON.stringify(c) === JSON.stringify(k));
    expect(at(['Drama'])).toBe(
      at(['Musical']) - 1 - res.data.columns.filter((c) => c[0] === 'Musical' && c.length === 2).length,
    );
    expect(at(['Western'])).toBe(res.data.columns.length - 1);
    expectTable(res.data, records, ['Source'], ['Major Genre', 'MPAA Rating'], measures);

    const one = {
      index: 'movies',
      rows: ['Major Genre'],
      columns: [{ field: 'MPAA Rating' }],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
    };
    const plain = await crosstab<JsonTable>(one);
    const withSubtotals = await crosstab<JsonTable>({ ...one, subtotals: true });
    expect(withSubtotals.data).toEqual(plain.data);
  });

  it('subtotals in HTML (own rows and columns, marked, escaped) and in CSV (a real CSV parser reads it)', async () => {
    const params = { ...GENRE_RATING, totals: SUBTOTAL_MEASURES.map(toMeasureParam), subtotals: true };
    const html = (await crosstab<string>(params)).data;
    const doc = parseHtml(html);
    const trs = elements(doc, 'tr');
    const subtotalRows = trs.filter((tr) => attr(tr, 'class') === 'quarry-subtotal');
    const genres = labelOrder(distinctKeys(MOVIES, ['Major Genre']));
    expect(subtotalRows).toHaveLength(genres.length);
    const heads = subtotalRows.map((tr) => elements(tr, 'th').map(text));
    expect(heads.map((h) => h[h.length - 1])).toEqual(genres.map((g) => `${g[0] ?? '(blank)'} Total`));
    // Each subtotal row's header spans the inner level; the outer header's rowspan covers only its children.
    expect(
      subtotalRows.every(
        (tr) => attr(elements(tr, 'th').slice(-1)[0], 'colspan') === '2' || elements(tr, 'th').length === 2,
      ),
    ).toBe(true);
    const dramaHead = elements(doc, 'th').find((th) => text(th) === 'Drama' && attr(th, 'scope') === 'row');
    const dramaChildren = distinctKeys(MOVIES, GENRE_RATING.rows).filter((k) => k[0] === 'Drama').length;
    expect(attr(dramaHead as never, 'rowspan')).toBe(String(dramaChildren));

    const csv = (await crosstab<string>({ ...params, format: 'csv' })) as { contentType: string; data: string };
    expect(csv.contentType).toBe('text/csv');
    const lines = parseCsv(csv.data, { relax_column_count: false }) as string[][];
    const creative = labelOrder(distinctKeys(MOVIES, ['Creative Type'])).map((k) => k[0] ?? '(blank)');
    const names = ['Sum (Worldwide Gross)', 'Average (IMDB Rating)', 'Count (Directors)'];
    expect(lines[0]).toEqual([
      'Major Genre',
      'MPAA Rating',
      ...creative.flatMap((c) => names.map((n) => `${c} | ${n}`)),
      ...names.map((n) => `Total | ${n}`),
    ]);
    const json = (await crosstab<JsonTable>({ ...params, format: 'json' })).data;
    expect(lines).toHaveLength(1 + json.rows.length + 1);
    json.rows.forEach((row, i) => {
      const line = lines[i + 1];
      const label = (v: Key[number]) => (v === null ? '(blank)' : String(v));
      expect(line.slice(0, 2)).toEqual(row.subtotal ? [`${label(row.key[0])} Total`, ''] : row.key.map(label));
      const numbers = [...row.cells.flat(), ...row.total];
      // Every digit is written; sums of doubles that DuckDB adds in parallel may differ in the last bit from
      // one call to the next (the JSON call is a second one), so doubles agree to 13 digits, integers exactly.
      const written = line.slice(2).map((v) => (v === '' ? null : Number(v)));
      expect(
        written.map((v, k) => (v !== null && Math.abs(v - numbers[k]!) <= 1e-13 * Math.abs(v) ? numbers[k] : v)),
      ).toEqual(numbers);
      expect(line.slice(2).every((v) => v === '' || /^-?\d+(\.\d+)?(e[-+]\d+)?$/.test(v))).toBe(true);
    });
    expect(lines[lines.length - 1].slice(0, 2)).toEqual(['Total', '']);
    // The same 13-digit agreement for the totals row (compensated sums still differ in the last bit now
    // and then between two calls).
    const totals = [...json.columnTotals.flat(), ...json.grandTotal];
    const written = lines[lines.length - 1].slice(2).map((v) => (v === '' ? null : Number(v)));
    expect(
      written.map((v, k) => (v !== null && Math.abs(v - totals[k]!) <= 1e-13 * Math.abs(v) ? totals[k] : v)),
    ).toEqual(totals);
  });

  it('HTML prints percentages with a % sign; JSON and CSV carry the plain numbers', async () => {
    const params = {
      index: 'movies',
      rows: ['Major Genre'],
      totals: [{ aggregationType: 'Count', showAs: 'percentOfGrandTotal' }],
    };
    const html = (await crosstab<string>(params)).data;
    const cells = elements(parseHtml(html), 'td').map(text);
    expect(cells.every((c) => /^\d+(\.\d+)?%$/.test(c))).toBe(true);
    expect(cells[cells.length - 1]).toBe('100%');
    // Two decimals at most in HTML, where a person reads it.
    expect(cells).toContain(`${Number(((789 / MOVIES.length) * 100).toFixed(2))}%`);
    expect(cells.every((c) => !/\.\d{3,}%$/.test(c))).toBe(true);
    const csv = (await crosstab<string>({ ...params, format: 'csv' })).data;
    expect(csv).not.toContain('%');
    const drama = (parseCsv(csv) as string[][]).find((l) => l[0] === 'Drama') as string[];
    expect(Number(drama[1])).toBeCloseTo((789 / MOVIES.length) * 100, 9);
  });

  it.each(['desc', 'asc'] as const)(
    'orders rows by a measure (%s), ties by label, and keeps the top N with totals over every record',
    async (direction) => {
      const measures: Measure[] = [{ agg: 'Count' }, { agg: 'Sum', field: 'Worldwide Gross' }];
      // Counts of MPAA ratings within Director tie often: the tie-break is visible.
      const base = {
        index: 'movies',
        rows: ['Distributor'],
        columns: [{ field: 'MPAA Rating' }],
        totals: measures.map(toMeasureParam),
        format: 'json',
      };
      const all = await crosstab<JsonTable>({ ...base, rowOrder: { by: 'value', measure: 0, direction } });
      const m = model(MOVIES, ['Distributor'], ['MPAA Rating']);
      const keys = distinctKeys(MOVIES, ['Distributor']);
      const sign = direction === 'desc' ? -1 : 1;
      const want = [...keys].sort((a, b) => {
        const d = sign * ((m.raw(a, [], measures[0]) as number) - (m.raw(b, [], measures[0]) as number));
        return d !== 0 ? d : byLabel(a[0], b[0]);
      });
      expect(all.data.rows.map((r) => r.key)).toEqual(want);
      const counts = all.data.rows.map((r) => r.total[0] as number);
      expect(new Set(counts).size).toBeLessThan(counts.length); // there were ties to break

      const top = await crosstab<JsonTable>({
        ...base,
        rowOrder: { by: 'value', measure: 1, direction },
        rowLimit: 10,
      });
      const bySum = [...keys].sort((a, b) => {
        const x = m.raw(a, [], measures[1]);
        const y = m.raw(b, [], measures[1]);
        if (x === null || y === null) return x === y ? byLabel(a[0], b[0]) : x === null ? 1 : -1;
        return x !== y ? sign * (x - y) : byLabel(a[0], b[0]);
      });
      expect(top.data.rows.map((r) => r.key)).toEqual(bySum.slice(0, 10));
      expect(top.data.rowsOmitted).toBe(keys.length - 10);
      expect(top.data.columnsOmitted).toBe(0);
      expect(top.data.grandTotal[0]).toBe(MOVIES.length);
      expectTable(top.data, MOVIES, ['Distributor'], ['MPAA Rating'], measures);
    },
  );

  it('orders columns by value and limits them; an inner level is ordered inside its group; HTML says "top N of M"', async () => {
    const params = {
      index: 'movies',
      rows: ['Major Genre', 'MPAA Rating'],
      columns: [{ field: 'Creative Type' }],
      totals: [{ aggregationType: 'Sum', field: 'US Gross' }],
      rowOrder: { by: 'value', direction: 'desc' },
      columnOrder: { by: 'value', direction: 'desc' },
      rowLimit: 3,
      columnLimit: 2,
    };
    const t = (await crosstab<JsonTable>({ ...params, format: 'json' })).data;
    const m = model(MOVIES, ['Major Genre', 'MPAA Rating'], ['Creative Type']);
    const sum: Measure = { agg: 'Sum', field: 'US Gross' };
    const desc = (f: (k: Key) => number | null) => (a: Key, b: Key) => {
      const x = f(a);
      const y = f(b);
      if (x === null || y === null) return x === y ? byLabel(a[a.length - 1], b[b.length - 1]) : x === null ? 1 : -1;
      return x !== y ? y - x : byLabel(a[a.length - 1], b[b.length - 1]);
    };
    const genres = distinctKeys(MOVIES, ['Major Genre'])
      .sort(desc((k) => m.raw(k, [], sum)))
      .slice(0, 3);
    const rows = genres.flatMap((g) =>
      distinctKeys(
        MOVIES.filter((r) => blankOf(r['Major Genre']) === g[0]),
        ['Major Genre', 'MPAA Rating'],
      ).sort(desc((k) => m.raw(k, [], sum))),
    );
    expect(t.rows.map((r) => r.key)).toEqual(rows);
    expect(t.columns).toEqual(
      distinctKeys(MOVIES, ['Creative Type'])
        .sort(desc((k) => m.raw([], k, sum)))
        .slice(0, 2),
    );
    expect([t.rowsOmitted, t.columnsOmitted]).toEqual([
      distinctKeys(MOVIES, ['Major Genre']).length - 3,
      distinctKeys(MOVIES, ['Creative Type']).length - 2,
    ]);
    expectTable(t, MOVIES, ['Major Genre', 'MPAA Rating'], ['Creative Type'], [sum]);
    const html = await crosstab<string>(params);
    expect(html).toMatchObject({ rowsOmitted: t.rowsOmitted, columnsOmitted: t.columnsOmitted });
    const cap = elements(parseHtml(html.data), 'caption').map(text)[0];
    expect(cap).toBe(
      `Major Genre / MPAA Rating by Creative Type; top 3 of ${3 + t.rowsOmitted} Major Genre; top 2 of ${2 + t.columnsOmitted} Creative Type`,
    );
  });

  it('a chart takes the same order and limit: "top 3 genres by gross" is one call', async () => {
    const res = await stack.call<{ contentType: string; data: string }>(analyst, 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['Major Genre'],
      totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross', showAs: 'percentOfGrandTotal' }],
      rowOrder: { by: 'value', direction: 'desc' },
      rowLimit: 3,
      chartType: 'Column2D',
      imageFormat: 'svg',
      width: 800,
      height: 500,
    });
    expect(res.error).toBeUndefined();
    const svg = res.data?.data ?? '';
    const m = model(MOVIES, ['Major Genre'], []);
    const sum: Measure = { agg: 'Sum', field: 'Worldwide Gross' };
    const ranked = distinctKeys(MOVIES, ['Major Genre'])
      .filter((k) => k[0] !== null)
      .sort((a, b) => (m.raw(b, [], sum) as number) - (m.raw(a, [], sum) as number))
      .map((k) => String(k[0]));
    for (const g of ranked.slice(0, 3)) expect(svg).toContain(`>${g}<`);
    for (const g of ranked.slice(3)) expect(svg).not.toContain(`>${g}<`);
    // A percentage says so where the chart names its measure.
    expect(svg).toContain('(% of grand total)');
  });

  it('a chart with too many categories names the rowLimit that fits, and that rowLimit draws', async () => {
    const chart = {
      index: 'movies',
      rows: ['Distributor'],
      totals: [{ aggregationType: 'Sum', field: 'US Gross' }],
      chartType: 'Bar2D',
      imageFormat: 'svg',
      width: 400,
      height: 300,
    };
    const detail = await refused(chart);
    const fits = Number(/Use rowLimit: (\d+) \(with rowOrder to choose which\)/.exec(detail)?.[1]);
    expect(fits).toBeGreaterThan(0);
    const res = await stack.call<{ contentType: string; data: string }>(analyst, 'CROSSTAB.EXECUTE', {
      ...chart,
      rowOrder: { by: 'value', direction: 'desc' },
      rowLimit: fits,
    });
    expect(res.error).toBeUndefined();
    expect(res.data?.contentType).toBe('image/svg+xml');
  });

  it('refuses bad analytics params with a 400 naming the parameter and the allowed values', async () => {
    const base = {
      index: 'movies',
      rows: ['Major Genre'],
      columns: [{ field: 'MPAA Rating' }],
      totals: [{ aggregationType: 'Count' }],
    };
    expect(await refused({ ...base, totals: [{ aggregationType: 'Count', showAs: 'percentOfParent' }] })).toMatch(
      /totals\[0\]\.showAs must be one of "value", "percentOfGrandTotal", "percentOfRowTotal", "percentOfColumnTotal"/,
    );
    expect(await refused({ ...base, rowOrder: { by: 'value', measure: 1 } })).toMatch(
      /rowOrder\.measure must be an index into totals, from 0 to 0/,
    );
    expect(await refused({ ...base, columnOrder: { by: 'size' } })).toMatch(
      /columnOrder\.by must be one of "label", "value"/,
    );
    expect(await refused({ ...base, rowOrder: { by: 'label', direction: 'up' } })).toMatch(
      /rowOrder\.direction must be one of "asc", "desc"/,
    );
    expect(await refused({ ...base, rowLimit: 0 })).toMatch(/rowLimit must be an integer between 1 and 10000/);
    expect(await refused({ ...base, columnLimit: 10001 })).toMatch(
      /columnLimit must be an integer between 1 and 10000/,
    );
    expect(await refused({ ...base, rowLimit: 2.5 })).toMatch(/rowLimit must be an integer/);
    expect(await refused({ ...base, format: 'tiff' })).toMatch(
      /format must be one of "html", "json", "csv", "xlsx", "pdf"/,
    );
    expect(await refused({ ...base, format: 'json', chartType: 'Column2D' })).toMatch(/format is for tables/);
    expect(await refused({ ...base, subtotals: 'yes' })).toMatch(/subtotals must be a boolean/);
  });

  it('a saved report keeps every analytics parameter, and its params re-execute to the same data', async () => {
    const params = {
      index: 'movies',
      query: '(MPAA Rating):(R OR PG)',
      rows: ['Major Genre', 'Creative Type'],
      columns: [{ field: 'MPAA Rating', reverse: true }],
      totals: [
        { aggregationType: 'Sum', field: 'Worldwide Gross', showAs: 'percentOfColumnTotal' },
        { aggregationType: 'Count', dynamicView: 'Directors' },
      ],
      subtotals: true,
      rowOrder: { by: 'value', measure: 1, direction: 'desc' },
      columnOrder: { by: 'label', measure: 0, direction: 'asc' },
      rowLimit: 4,
      columnLimit: 1,
      format: 'json',
    };
    const first = await stack.call<JsonTable & { report: { guid: string } }>(analyst, 'CROSSTAB.EXECUTE', {
      ...params,
      saveReport: { name: 'analytics' },
    });
    expect(first.error).toBeUndefined();
    const guid = (first.data as unknown as { report: { guid: string } }).report.guid;
    const meta = await stack.call<{ method: string; params: Record<string, unknown> }>(analyst, 'REPORTS.METADATA', {
      guid,
    });
    expect(meta.data?.method).toBe('CROSSTAB.EXECUTE');
    expect(meta.data?.params).toEqual(params);
    const again = await crosstab<JsonTable>(meta.data?.params as Record<string, unknown>);
    const { report: _r, ...firstData } = first.data as unknown as Record<string, unknown>;
    expect(again).toEqual(firstData);
    // columns[].reverse with label order: R before PG.
    expect(again.data.columns).toEqual([['R']]);
  });
});

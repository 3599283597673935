import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { parse as parseCsv } from 'csv-parse/sync';
import { parseTable } from './support/html-table';
import { runCli } from './support/quarry-process';
import { useStackWithAnalyst } from './support/stack';
import {
  cellValues,
  comparison,
  periodKey,
  type Grain,
  type Measure,
  type Naive,
  type TimedRec,
} from './support/period-oracle';

/*
 * Period comparison end to end through JSON-RPC, against values computed here in plain JS from the
 * records (support/period-oracle.ts): a gap (no record in June 2024), a partial last month (the last
 * record is 15 March 2025), DST changes (Europe/Paris, America/New_York), a year boundary, every kind of
 * aggregation, limits, subtotals and a query.
 */

const CARRIERS = ['AA', 'BB', 'CC'];
function records(): TimedRec[] {
  const out: TimedRec[] = [];
  const start = Date.UTC(2023, 10, 1);
  const end = Date.UTC(2025, 2, 15, 10);
  let i = 0;
  // Every 7 hours: each hour of the day in turn, the day boundary crossed in every zone.
  for (let t = start; t <= end; t += 7 * 3600_000, i++) {
    const iso = new Date(t).toISOString().slice(0, 19);
    // No record in June 2024 in any of the zones below.
    if (t >= Date.UTC(2024, 4, 31, 12) && t < Date.UTC(2024, 6, 1, 12)) continue;
    out.push({
      date: iso,
      carrier: CARRIERS[(i * 7) % 3 === 0 ? 0 : i % 3],
      delay: ((i * 37) % 101) - 20 + (i % 4) * 0.25,
      user: `u${(i * 13) % 41}`,
    });
  }
  // The last record, mid-March: a partial last month.
  out.push({ date: '2025-03-15T10:00:00', carrier: 'BB', delay: 7.5, user: 'u1' });
  return out;
}
const RECORDS = records();

type Key = Array<string | number | null>;
interface JsonTable {
  rowFields: string[];
  measures: Array<{ name: string; compare?: { to: string; as: string; period: string } }>;
  columns: Key[];
  rows: Array<{ key: Key; cells: Array<Array<number | null>>; total: Array<number | null>; partial?: true }>;
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
  comparePartial?: { on: string; field: string; key: string; lastRecord: string };
  partialColumns?: number[];
}

/**
 * The crosstab engine the server runs: DuckDB, or ClickHouse (chDB in-process) when
 * crosstab-compare.clickhouse.test.ts runs this file, so both engines meet the same plain-JS oracle.
 */
const PIVOT_ENGINE = (globalThis as { quarryPivotEngine?: string }).quarryPivotEngine ?? 'duckdb';

let tmp: string;
const { stack, analyst } = useStackWithAnalyst({
  env: { QUARRY_PIVOT_ENGINE: PIVOT_ENGINE },
  extra: async (env) => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-compare-'));
    fs.writeFileSync(path.join(tmp, 'delays.json'), JSON.stringify(RECORDS));
    const r = await runCli(['index', 'load', 'delays', path.join(tmp, 'delays.json')], env);
    if (r.code !== 0) throw new Error(r.stderr);
  },
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function call<T>(params: Record<string, unknown>) {
  return stack().call<T>(analyst(), 'CROSSTAB.EXECUTE', { index: 'delays', cache: false, ...params });
}
async function json(params: Record<string, unknown>): Promise<JsonTable> {
  const res = await call<{ data: JsonTable }>({ format: 'json', ...params });
  if (!res.data)
    throw new Error(
      `${JSON.stringify(res.error)}\n${stack()
        .quarry.logs()
        .filter((l) => /error/i.test(l))
        .slice(-3)
        .join('\n')}`,
    );
  return res.data.data;
}

/** An axis of the oracle: a period of the record's (local or shifted) time, or its carrier. */
type Axis = { grain: Grain } | 'carrier';
interface Total {
  m: Measure;
  as?: 'value' | 'difference' | 'percentDifference';
}
const close = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * Every value of the JSON table (cells, subtotals, row and column totals, grand total) against the
 * oracle: a key selects the records whose axes' keys start with it.
 */
function expectTable(
  got: JsonTable,
  recs: readonly TimedRec[],
  o: {
    rows: Axis[];
    columns: Axis[];
    totals: Total[];
    timeZone: string;
    grain: Grain;
    unit: 'month' | 'day' | 'hour';
    n: number;
  },
): { lastKey: string; partial: boolean; checked: number } {
  const cmp = comparison(recs, o);
  const keyOf = (a: Axis, x: { r: TimedRec; t: Naive }) => (a === 'carrier' ? x.r.carrier : periodKey(x.t, a.grain));
  const pick = (set: Array<{ r: TimedRec; t: Naive }>, rowKey: Key, colKey: Key) =>
    set
      .filter(
        (x) =>
          rowKey.every((k, i) => keyOf(o.rows[i], x) === k) && colKey.every((k, i) => keyOf(o.columns[i], x) === k),
      )
      .map((x) => x.r);
  let checked = 0;
  const check = (values: Array<number | null>, rowKey: Key, colKey: Key) => {
    const cur = pick(cmp.local, rowKey, colKey);
    const prev = pick(cmp.shifted, rowKey, colKey);
    const wants = cellValues(cur, prev, o.totals);
    o.totals.forEach((_t, m) => {
      const want = wants[m];
      const where = `${JSON.stringify(rowKey)} × ${JSON.stringify(colKey)} total ${m}`;
      expect({ where, got: values[m], ok: close(values[m], want) }).toEqual({ where, got: values[m], ok: true });
      checked++;
    });
  };
  for (const row of got.rows) {
    got.columns.forEach((c, j) => check(row.cells[j], row.key, c));
    check(row.total, row.key, []);
  }
  got.columns.forEach((c, j) => check(got.columnTotals[j], [], c));
  check(got.grandTotal, [], []);
  return { lastKey: cmp.lastKey, partial: cmp.partial, checked };
}

const SUM = { aggregationType: 'Sum', field: 'delay' };
const month = () => ({ field: 'date', dateGroup: 'month' });

describe(`CROSSTAB.EXECUTE totals with compare (${PIVOT_ENGINE})`, () => {
  it('previous month by month in Europe/Paris: value, difference, % difference, counts, distinct counts and medians', async () => {
    const got = await json({
      rows: [month()],
      timeZone: 'Europe/Paris',
      totals: [
        SUM,
        { ...SUM, compare: { to: 'previousPeriod' } },
        { ...SUM, compare: { to: 'previousPeriod', as: 'difference' } },
        { ...SUM, compare: { to: 'previousPeriod', as: 'percentDifference' } },
        { aggregationType: 'Count', compare: { to: 'previousPeriod', as: 'value' } },
        { aggregationType: 'CountDistinct', field: 'user', compare: { to: 'previousPeriod' } },
        { aggregationType: 'Median', field: 'delay', compare: { to: 'previousPeriod', as: 'difference' } },
      ],
    });
    const r = expectTable(got, RECORDS, {
      rows: [{ grain: 'month' }],
      columns: [],
      totals: [
        { m: 'sum' },
        { m: 'sum', as: 'value' },
        { m: 'sum', as: 'difference' },
        { m: 'sum', as: 'percentDifference' },
        { m: 'count', as: 'value' },
        { m: 'distinct', as: 'value' },
        { m: 'median', as: 'difference' },
      ],
      timeZone: 'Europe/Paris',
      grain: 'month',
      unit: 'month',
      n: 1,
    });
    expect(r.checked).toBeGreaterThan(100);
    // The gap: June has no row, July compares with June's nothing (no sum, no count), and
    // June's records are not shown anywhere.
    const keys = got.rows.map((x) => x.key[0]);
    expect(keys).not.toContain('2024-06');
    const july = got.rows.find((x) => x.key[0] === '2024-07');
    expect(july?.total.slice(1, 6)).toEqual([null, null, null, 0, 0]);
    // The partial last month: the oracle says it is, and Quarry marks that row alone.
    expect(r).toMatchObject({ lastKey: '2025-03', partial: true });
    expect(got.rows.filter((x) => x.partial).map((x) => x.key)).toEqual([['2025-03']]);
    expect(got.comparePartial).toEqual({
      on: 'rows',
      field: 'date',
      key: '2025-03',
      lastRecord: '2025-03-15 11:00:00.000000',
    });
    expect(got.measures.map((m) => m.name)).toEqual([
      'Sum (delay)',
      'Sum (delay), previous month',
      'Sum (delay) vs previous month',
      'Sum (delay) vs previous month (%)',
      'Count (Records), previous month',
      'CountDistinct (user), previous month',
      'Median (delay) vs previous month',
    ]);
    expect(got.measures[2].compare).toEqual({ to: 'previousPeriod', as: 'difference', period: 'month' });
  });

  it('previous year, carriers by month, top 2 carriers and 6 months: the kept keys compare with their own records', async () => {
    const totals = [
      SUM,
      { ...SUM, compare: { to: 'previousYear', as: 'difference' } },
      { aggregationType: 'CountDistinct', field: 'user', compare: { to: 'previousYear' } },
    ];
    const got = await json({
      rows: ['carrier'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      rowOrder: { by: 'value', measure: 0, direction: 'desc' },
      rowLimit: 2,
      columnLimit: 6,
      columnOrder: { by: 'label', direction: 'desc' },
      totals,
    });
    expect(got.rows).toHaveLength(2);
    expect(got.columns.map((c) => c[0])).toEqual(['2025-03', '2025-02', '2025-01', '2024-12', '2024-11', '2024-10']);
    expectTable(got, RECORDS, {
      rows: ['carrier'],
      columns: [{ grain: 'month' }],
      totals: [{ m: 'sum' }, { m: 'sum', as: 'difference' }, { m: 'distinct', as: 'value' }],
      timeZone: 'UTC',
      grain: 'month',
      unit: 'month',
      n: 12,
    });
    // The partial month is a column here.
    expect(got.comparePartial?.on).toBe('columns');
    expect(got.partialColumns).toEqual([0]);
  });

  it('top 2 carriers by every month, in UTC and in Paris: the compared period read in the same passes as the table', async () => {
    const totals = [
      SUM,
      { ...SUM, compare: { to: 'previousPeriod', as: 'difference' } },
      { aggregationType: 'Count', compare: { to: 'previousPeriod', as: 'value' } },
      { aggregationType: 'CountDistinct', field: 'user', compare: { to: 'previousPeriod' } },
      { aggregationType: 'Average', field: 'delay', compare: { to: 'previousPeriod', as: 'percentDifference' } },
    ];
    for (const timeZone of ['UTC', 'Europe/Paris']) {
      const got = await json({
        rows: ['carrier'],
        columns: [month()],
        rowOrder: { by: 'value', measure: 0, direction: 'asc' },
        rowLimit: 2,
        timeZone,
        totals,
      });
      expect(got.rows).toHaveLength(2);
      const r = expectTable(got, RECORDS, {
        rows: ['carrier'],
        columns: [{ grain: 'month' }],
        totals: [
          { m: 'sum' },
          { m: 'sum', as: 'difference' },
          { m: 'count', as: 'value' },
          { m: 'distinct', as: 'value' },
          { m: 'average', as: 'percentDifference' },
        ],
        timeZone,
        grain: 'month',
        unit: 'month',
        n: 1,
      });
      expect(r.checked).toBeGreaterThan(100);
      expect(got.partialColumns).toEqual([got.columns.length - 1]);
    }
  });

  it('years and months with subtotals: a year compares the shifted records of all its months, the Total the whole range', async () => {
    const got = await json({
      rows: [
        { field: 'date', dateGroup: 'year' },
        { field: 'date', dateGroup: 'month' },
      ],
      subtotals: true,
      timeZone: 'America/New_York',
      totals: [
        { aggregationType: 'Count' },
        { aggregationType: 'Count', compare: { to: 'previousPeriod' } },
        { ...SUM, compare: { to: 'previousPeriod', as: 'percentDifference' } },
      ],
    });
    expect(got.rows.some((x) => x.key.length === 1)).toBe(true);
    expectTable(got, RECORDS, {
      rows: [{ grain: 'year' }, { grain: 'month' }],
      columns: [],
      totals: [{ m: 'count' }, { m: 'count', as: 'value' }, { m: 'sum', as: 'percentDifference' }],
      timeZone: 'America/New_York',
      grain: 'month',
      unit: 'month',
      n: 1,
    });
    // The first month of a year compares with December of the year before.
    const jan = got.rows.find((x) => x.key[1] === '2025-01');
    const dec = got.rows.find((x) => x.key[1] === '2024-12');
    expect(jan?.total[1]).toBe(dec?.total[0]);
  });

  it('weeks a year before (52 weeks, same weekday) under a query, and days across DST', async () => {
    const aa = RECORDS.filter((r) => r.carrier === 'AA');
    const weeks = await json({
      query: 'carrier:AA',
      rows: [{ field: 'date', dateGroup: 'week' }],
      timeZone: 'Europe/Paris',
      totals: [SUM, { ...SUM, compare: { to: 'previousYear', as: 'difference' } }],
    });
    expectTable(weeks, aa, {
      rows: [{ grain: 'week' }],
      columns: [],
      totals: [{ m: 'sum' }, { m: 'sum', as: 'difference' }],
      timeZone: 'Europe/Paris',
      grain: 'week',
      unit: 'day',
      n: 364,
    });
    expect(weeks.measures[1].name).toBe('Sum (delay) vs same week last year');
    const days = await json({
      query: 'carrier:BB',
      rows: [{ field: 'date', dateGroup: 'day' }],
      timeZone: 'America/New_York',
      totals: [
        { aggregationType: 'Median', field: 'delay' },
        { aggregationType: 'Median', field: 'delay', compare: { to: 'previousPeriod' } },
      ],
    });
    // 10 March 2024 and 3 November 2024 are DST days in New York.
    expect(days.rows.map((x) => x.key[0])).toEqual(expect.arrayContaining(['2024-03-10', '2024-11-03']));
    expectTable(
      days,
      RECORDS.filter((r) => r.carrier === 'BB'),
      {
        rows: [{ grain: 'day' }],
        columns: [],
        totals: [{ m: 'median' }, { m: 'median', as: 'value' }],
        timeZone: 'America/New_York',
        grain: 'day',
        unit: 'day',
        n: 1,
      },
    );
  });

  it('HTML, CSV, XLSX and a chart label the compared totals and mark the partial month', async () => {
    const params = {
      rows: [month()],
      query: 'date:[2024-10-01 TO *]',
      totals: [SUM, { ...SUM, compare: { to: 'previousPeriod', as: 'difference' } }],
    };
    const html = await call<{ data: string }>({ ...params, format: 'html' });
    const t = parseTable(html.data!.data);
    expect(t.head[0]).toEqual(['date (month)', 'Sum (delay)', 'Sum (delay) vs previous month']);
    expect(t.body.map((r) => r[0])).toEqual(['2024-10', '2024-11', '2024-12', '2025-01', '2025-02', '2025-03 *']);
    expect(html.data!.data).toContain(
      '* 2025-03 is partial (data to 2025-03-15 10:00): compared with the same elapsed span',
    );
    const csv = await call<{ data: string }>({ ...params, format: 'csv' });
    const lines = parseCsv(csv.data!.data) as string[][];
    expect(lines[0]).toEqual(['date (month)', 'Total | Sum (delay)', 'Total | Sum (delay) vs previous month']);
    // The partial month is marked as in HTML, and a last line (as wide as the others) explains the mark.
    expect(lines.map((l) => l[0])).toEqual([
      'date (month)',
      '2024-10',
      '2024-11',
      '2024-12',
      '2025-01',
      '2025-02',
      '2025-03 *',
      'Total',
      '* 2025-03 is partial (data to 2025-03-15 10:00): compared with the same elapsed span',
    ]);
    expect(lines[lines.length - 1].slice(1)).toEqual(['', '']);
    // As a column: the header of the partial month's columns is marked.
    const across = await call<{ data: string }>({ ...params, rows: ['carrier'], columns: [month()], format: 'csv' });
    const header = (parseCsv(across.data!.data) as string[][])[0];
    expect(header.filter((h) => h.startsWith('2025-03'))).toEqual([
      '2025-03 * | Sum (delay)',
      '2025-03 * | Sum (delay) vs previous month',
    ]);
    const xlsx = await call<{ data: string }>({ ...params, format: 'xlsx' });
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(Buffer.from(xlsx.data!.data, 'base64') as unknown as ArrayBuffer);
    const sheet = book.worksheets[0];
    const texts = sheet.getSheetValues().flat().map(String);
    expect(texts).toContain('Sum (delay) vs previous month');
    expect(texts).toContain('2025-03 *');
    // The mark is explained as CSV's last line explains it: a note row one blank row under the Total row,
    // in italics, in the first cell alone (its text runs on over the empty cells beside it).
    const note = '* 2025-03 is partial (data to 2025-03-15 10:00): compared with the same elapsed span';
    const noteUnder = async (ask: Record<string, unknown>, width: number) => {
      const got = await call<{ data: string }>({ ...params, ...ask, format: 'xlsx' });
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.load(Buffer.from(got.data!.data, 'base64') as unknown as ArrayBuffer);
      const ws = wb.worksheets[0];
      // QUARRY_KEEP_DIR=<dir> keeps the workbooks, to look at.
      const keep = process.env.QUARRY_KEEP_DIR;
      if (keep)
        fs.writeFileSync(
          path.join(keep, `partial-${width}-${String(ask.totalsOn ?? 'columns')}.xlsx`),
          Buffer.from(got.data!.data, 'base64'),
        );
      const firstColumn: string[] = [];
      ws.eachRow({ includeEmpty: true }, (row, n) => (firstColumn[n] = String(row.getCell(1).value ?? '')));
      const totalAt = firstColumn.lastIndexOf('Total');
      expect(totalAt).toBeGreaterThan(0);
      const at = firstColumn.indexOf(note);
      // One blank row between the table's last row and the note, and nothing after it.
      expect(at).toBe(totalAt + 2);
      expect(ws.getRow(totalAt + 1).actualCellCount).toBe(0);
      expect(ws.rowCount).toBe(at);
      expect(ws.getCell(at, 1).font?.italic).toBe(true);
      expect(ws.getCell(at, 1).isMerged).toBe(false);
      // The cells beside it are empty, across the table's whole width.
      for (let c = 2; c <= width; c++) expect(ws.getCell(at, c).value).toBeNull();
      // The table is as wide as said: its header row's last cell is the Total column's.
      expect(ws.getRow(1).cellCount).toBe(width);
      return ws;
    };
    // One row field and two totals: three columns wide.
    await noteUnder({}, 3);
    // The partial month as columns (carrier x month): its header is marked; one column per CSV field.
    const months = across.data!.data.split('\r\n')[0].split(',').length;
    const wide = await noteUnder({ rows: ['carrier'], columns: [month()] }, months);
    expect(wide.getRow(1).values as unknown[]).toContain('2025-03 *');
    // Totals on rows: under the last Total row (one per total): row field, Totals and the Total column.
    const onRows = await noteUnder({ totalsOn: 'rows' }, 3);
    expect(onRows.getCell(onRows.rowCount - 2, 2).value).toBe('Sum (delay) vs previous month');
    // Without a comparison nothing is marked partial, and there is no note.
    const whole = await call<{ data: string }>({ ...params, totals: [SUM], format: 'xlsx' });
    const wholeBook = new ExcelJS.Workbook();
    await wholeBook.xlsx.load(Buffer.from(whole.data!.data, 'base64') as unknown as ArrayBuffer);
    expect(wholeBook.worksheets[0].getSheetValues().flat().map(String).join('\n')).not.toContain('is partial');
    const chart = await call<{ data: { series?: Array<{ name: string }> } }>({
      ...params,
      chartType: 'MSColumn2D',
      imageFormat: 'echarts',
    });
    expect(JSON.stringify(chart.data?.data)).toContain('Sum (delay) vs previous month');
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'no date axis',
      { rows: ['carrier'], totals: [{ ...SUM, compare: { to: 'previousPeriod' } }] },
      /totals\[0\]\.compare needs a row or column with a calendar dateGroup/,
    ],
    [
      'a repeating date part (dayOfWeek)',
      { rows: [{ field: 'date', dateGroup: 'dayOfWeek' }], totals: [{ ...SUM, compare: { to: 'previousPeriod' } }] },
      /totals\[0\]\.compare needs a row or column with a calendar dateGroup/,
    ],
    [
      'an unknown to',
      { rows: [month()], totals: [{ ...SUM, compare: { to: 'lastWeek' } }] },
      /totals\[0\]\.compare\.to must be one of "previousPeriod", "previousYear"/,
    ],
    [
      'an unknown as',
      { rows: [month()], totals: [{ ...SUM, compare: { to: 'previousYear', as: 'ratio' } }] },
      /totals\[0\]\.compare\.as must be one of/,
    ],
    [
      'an unknown key',
      { rows: [month()], totals: [{ ...SUM, compare: { to: 'previousYear', by: 2 } }] },
      /Unknown parameter in totals\[0\]\.compare: "by"/,
    ],
    [
      'compare on a calculated total',
      {
        rows: [month()],
        totals: [SUM, { name: 'x', formula: '[Sum (delay)] * 2', compare: { to: 'previousPeriod' } }],
      },
      /totals\[1\]\.compare goes with an aggregation/,
    ],
    [
      'a percentage difference shown as a share',
      {
        rows: [month()],
        totals: [{ ...SUM, showAs: 'percentOfGrandTotal', compare: { to: 'previousPeriod', as: 'percentDifference' } }],
      },
      /totals\[0\]\.compare: a percentage difference cannot also be shown as percentOfGrandTotal/,
    ],
    [
      'rows ranked by a compared total',
      {
        rows: [month()],
        rowOrder: { by: 'value', measure: 0 },
        rowLimit: 3,
        totals: [{ ...SUM, compare: { to: 'previousPeriod' } }],
      },
      /rowOrder\.measure: order by a total without compare/,
    ],
    [
      'a compared percentage written as money',
      {
        rows: [month()],
        totals: [
          {
            ...SUM,
            format: { style: 'currency', currency: 'EUR' },
            compare: { to: 'previousPeriod', as: 'percentDifference' },
          },
        ],
      },
      /totals\[0\]\.format\.style: currency cannot write a total shown as a percentage/,
    ],
  ])('refuses %s with a 400 naming the param', async (_, params, message) => {
    const res = await call(params);
    expect(res.error?.code).toBe(400);
    expect(res.error?.data.detail).toMatch(message);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from './support/quarry-process';
import { mulberry32 } from './support/seeded-random';
import { useStackWithAnalyst } from './support/stack';
import { cellValues, comparison, periodKey, type Measure, type Naive, type TimedRec } from './support/period-oracle';

/*
 * The differential check's edges, end to end through JSON-RPC on generated data, against values computed
 * here in plain JS (support/period-oracle.ts, ranks by hand): categories absent from a month they had
 * records the month before, hours around the four DST changes of 2025 in Europe/Paris and
 * America/New_York compared with the previous hour that existed, and ranks inside the Other row and
 * column. crosstab-edges.clickhouse.test.ts runs the same file on ClickHouse.
 */

const PIVOT_ENGINE = (globalThis as { quarryPivotEngine?: string }).quarryPivotEngine ?? 'duckdb';

const CATS = ['north', 'south', 'east', 'west', 'far', 'near', 'up'];
const MONTHS = ['2025-01', '2025-02', '2025-03', '2025-04', '2025-05', '2025-06'];

/** Months × categories with holes: east has one record in March and none in April or May, west none in February. */
function monthly(): TimedRec[] {
  const rnd = mulberry32(63);
  const out: TimedRec[] = [];
  const fixed: Record<string, number[]> = { east: [3, 2, 1, 0, 0, 2], west: [4, 0, 5, 3, 6, 2] };
  MONTHS.forEach((m, mi) => {
    for (const [ci, cat] of CATS.entries()) {
      const n = fixed[cat]?.[mi] ?? (rnd() < 0.2 ? 0 : 1 + Math.floor(rnd() * (3 + ci)));
      for (let k = 0; k < n; k++) {
        // East's March record sits mid-month so it is March in every zone; the others anywhere in the
        // month, some on the first night (the month before in New York).
        const day = cat === 'east' && m === '2025-03' ? 15 : 1 + Math.floor(rnd() * 28);
        const hour = cat === 'east' && m === '2025-03' ? 12 : Math.floor(rnd() * 24);
        const date = `${m}-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:${String(Math.floor(rnd() * 60)).padStart(2, '0')}:00`;
        out.push({ date, carrier: cat, delay: Math.round(rnd() * 400 - 100) / 4, user: `u${Math.floor(rnd() * 9)}` });
      }
    }
  });
  return out;
}

/** The four DST changes of 2025 in Paris and New York, as UTC instants. */
const CHANGES = ['2025-03-09T07:00:00Z', '2025-03-30T01:00:00Z', '2025-10-26T01:00:00Z', '2025-11-02T06:00:00Z'];

/** A record every 20 minutes (some left out) for four hours on each side of each change. */
function aroundChanges(): TimedRec[] {
  const rnd = mulberry32(64);
  const out: TimedRec[] = [];
  for (const change of CHANGES) {
    const at = Date.parse(change);
    for (let t = at - 4 * 3600_000; t < at + 4 * 3600_000; t += 20 * 60_000) {
      if (rnd() < 0.15) continue;
      const date = new Date(t).toISOString().slice(0, 19);
      out.push({ date, carrier: CATS[out.length % 3], delay: Math.round(rnd() * 200) / 4, user: `u${out.length % 5}` });
    }
  }
  return out;
}

const MONTHLY = monthly();
const HOURLY = aroundChanges();

let tmp: string;
const { stack, analyst } = useStackWithAnalyst({
  env: { QUARRY_PIVOT_ENGINE: PIVOT_ENGINE },
  extra: async (env) => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-edges-'));
    for (const [name, recs] of [
      ['sales', MONTHLY],
      ['clock', HOURLY],
    ] as const) {
      fs.writeFileSync(path.join(tmp, `${name}.json`), JSON.stringify(recs));
      const r = await runCli(['index', 'load', name, path.join(tmp, `${name}.json`)], env);
      if (r.code !== 0) throw new Error(r.stderr);
    }
  },
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

type Key = Array<string | number | null>;
interface JsonTable {
  columns: Key[];
  rows: Array<{ key: Key; cells: Array<Array<number | null>>; total: Array<number | null>; other?: number }>;
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
  otherColumn?: number;
  comparePartial?: { key: string };
}

async function json(index: string, params: Record<string, unknown>): Promise<JsonTable> {
  const res = await stack().call<{ data: JsonTable }>(analyst(), 'CROSSTAB.EXECUTE', {
    index,
    cache: false,
    format: 'json',
    ...params,
  });
  if (!res.data) throw new Error(JSON.stringify(res.error));
  return res.data.data;
}

type As = 'value' | 'difference' | 'percentDifference';
const close = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

const COUNT = { aggregationType: 'Count' };
const SUM = { aggregationType: 'Sum', field: 'delay' };
const prev = (as: As) => ({ compare: { to: 'previousPeriod', as } });

describe(`crosstab edges (${PIVOT_ENGINE})`, () => {
  it('a month with no records of a category compares with the month before: previous 1, difference −1, −100 %', async () => {
    const totals = [
      COUNT,
      { ...COUNT, ...prev('value') },
      { ...COUNT, ...prev('difference') },
      { ...COUNT, ...prev('percentDifference') },
      { ...SUM, ...prev('value') },
      { ...SUM, ...prev('difference') },
    ];
    const oracle: Array<{ m: Measure; as?: As }> = [
      { m: 'count' },
      { m: 'count', as: 'value' },
      { m: 'count', as: 'difference' },
      { m: 'count', as: 'percentDifference' },
      { m: 'sum', as: 'value' },
      { m: 'sum', as: 'difference' },
    ];
    for (const timeZone of ['UTC', 'America/New_York']) {
      const got = await json('sales', {
        rows: ['carrier'],
        columns: [{ field: 'date', dateGroup: 'month' }],
        timeZone,
        totals,
      });
      const cmp = comparison(MONTHLY, { timeZone, grain: 'month', unit: 'month', n: 1 });
      const pick = (set: Array<{ r: TimedRec; t: Naive }>, row: Key, col: Key) =>
        set
          .filter(
            (x) =>
              (row.length === 0 || x.r.carrier === row[0]) && (col.length === 0 || periodKey(x.t, 'month') === col[0]),
          )
          .map((x) => x.r);
      let filled = 0;
      const check = (values: Array<number | null>, row: Key, col: Key) => {
        const want = cellValues(pick(cmp.local, row, col), pick(cmp.shifted, row, col), oracle);
        const where = `${timeZone} ${JSON.stringify(row)} × ${JSON.stringify(col)}`;
        expect({ where, values, ok: values.every((v, m) => close(v, want[m])) }).toEqual({
          where,
          values: want,
          ok: true,
        });
        if (pick(cmp.local, row, col).length === 0 && values[1] !== null) filled++;
      };
      for (const row of got.rows) {
        got.columns.forEach((c, j) => check(row.cells[j], row.key, c));
        check(row.total, row.key, []);
      }
      got.columns.forEach((c, j) => check(got.columnTotals[j], [], c));
      check(got.grandTotal, [], []);
      // Cells without records of their own whose month before had some: compared, not left empty.
      expect(filled).toBeGreaterThan(2);
      if (timeZone === 'UTC') {
        const east = got.rows.find((r) => r.key[0] === 'east');
        const april = got.columns.findIndex((c) => c[0] === '2025-04');
        const may = got.columns.findIndex((c) => c[0] === '2025-05');
        expect(east?.cells[april]).toEqual([null, 1, -1, -100, expect.any(Number), null]);
        // May compares with an April of no records: nothing to show.
        expect(east?.cells[may]).toEqual([null, null, null, null, null, null]);
      }
    }
  });

  it('an hour compares with the previous hour that existed across each DST change, in Paris and New York', async () => {
    const totals = [
      COUNT,
      { ...COUNT, ...prev('value') },
      { ...COUNT, ...prev('difference') },
      { ...COUNT, ...prev('percentDifference') },
      { ...SUM, ...prev('value') },
      { ...SUM, ...prev('difference') },
    ];
    const oracle: Array<{ m: Measure; as?: As }> = [
      { m: 'count' },
      { m: 'count', as: 'value' },
      { m: 'count', as: 'difference' },
      { m: 'count', as: 'percentDifference' },
      { m: 'sum', as: 'value' },
      { m: 'sum', as: 'difference' },
    ];
    const inUtcHour = (h: string) => HOURLY.filter((r) => r.date.startsWith(h)).length;
    for (const timeZone of ['Europe/Paris', 'America/New_York']) {
      for (const on of ['rows', 'columns'] as const) {
        const hour = { field: 'date', dateGroup: 'hour' };
        // Hours as rows, or as columns under each category (a crosstab has at least one row field).
        const got = await json(
          'clock',
          on === 'rows' ? { rows: [hour], timeZone, totals } : { rows: ['carrier'], columns: [hour], timeZone, totals },
        );
        const cmp = comparison(HOURLY, { timeZone, grain: 'hour', unit: 'hour', n: 1 });
        const pick = (set: Array<{ r: TimedRec; t: Naive }>, k: Key, carrier?: Key[number]) =>
          set
            .filter((x) => (k.length === 0 || periodKey(x.t, 'hour') === k[0]) && (!carrier || x.r.carrier === carrier))
            .map((x) => x.r);
        const keys = on === 'rows' ? got.rows.map((r) => r.key) : got.columns;
        const values = on === 'rows' ? got.rows.map((r) => r.total) : got.columnTotals;
        expect(keys.map((k) => k[0])).toEqual([...new Set(cmp.local.map((x) => periodKey(x.t, 'hour')))].sort());
        const expectAt = (got: Array<number | null>, k: Key, carrier?: Key[number]) => {
          const want = cellValues(pick(cmp.local, k, carrier), pick(cmp.shifted, k, carrier), oracle);
          const where = `${timeZone} ${on} ${String(k[0])} ${String(carrier ?? '')}`;
          expect({ where, got, ok: got.every((v, m) => close(v, want[m])) }).toEqual({ where, got: want, ok: true });
        };
        keys.forEach((k, i) => expectAt(values[i], k));
        if (on === 'columns')
          for (const row of got.rows) got.columns.forEach((c, j) => expectAt(row.cells[j], c, row.key[0]));
        expect(got.comparePartial?.key).toBe(cmp.partial ? cmp.lastKey : undefined);
        const previousOf = (key: string) => values[keys.findIndex((k) => k[0] === key)]?.[1];
        if (timeZone === 'Europe/Paris') {
          // 02:00 never happened on 30 March: 03:00 CEST follows 01:00 CET (00:00 UTC).
          expect(previousOf('2025-03-30T03')).toBe(inUtcHour('2025-03-30T00'));
          // 02:00 came twice on 26 October: 03:00 CET follows the second (01:00 UTC) alone.
          expect(previousOf('2025-10-26T03')).toBe(inUtcHour('2025-10-26T01'));
          expect(values[keys.findIndex((k) => k[0] === '2025-10-26T02')][0]).toBe(
            inUtcHour('2025-10-26T00') + inUtcHour('2025-10-26T01'),
          );
        } else {
          expect(previousOf('2025-03-09T03')).toBe(inUtcHour('2025-03-09T06'));
          expect(previousOf('2025-11-02T02')).toBe(inUtcHour('2025-11-02T06'));
        }
      }
    }
  });

  it('ranks inside the Other row and the Other column follow one rule: ranked along it, never ranked itself', async () => {
    const got = await json('sales', {
      rows: ['carrier'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      rowOrder: { by: 'value', measure: 0, direction: 'desc' },
      rowLimit: 3,
      otherRow: true,
      columnOrder: { by: 'value', measure: 0, direction: 'desc' },
      columnLimit: 4,
      otherColumn: true,
      totals: [
        COUNT,
        { ...COUNT, showAs: 'rankInRow' },
        { ...COUNT, showAs: 'rankInColumn' },
        { ...SUM, showAs: 'rankInRow' },
        { ...SUM, showAs: 'rankInColumn' },
      ],
    });
    const month = (r: TimedRec) => r.date.slice(0, 7);
    const keptRows = got.rows.filter((r) => r.other === undefined).map((r) => String(r.key[0]));
    const keptColumns = got.columns.slice(0, -1).map((c) => String(c[0]));
    expect(got.rows.at(-1)?.other).toBe(CATS.length - 3);
    expect(got.otherColumn).toBe(MONTHS.length - 4);
    // null: every row (column); undefined: the Other one; else the key.
    const inRow = (r: TimedRec, row: string | null | undefined) =>
      row === null || (row === undefined ? !keptRows.includes(r.carrier) : r.carrier === row);
    const inColumn = (r: TimedRec, col: string | null | undefined) =>
      col === null || (col === undefined ? !keptColumns.includes(month(r)) : month(r) === col);
    const measure = (row: string | null | undefined, col: string | null | undefined, m: 'count' | 'sum') => {
      const recs = MONTHLY.filter((r) => inRow(r, row) && inColumn(r, col));
      if (recs.length === 0) return null;
      return m === 'count' ? recs.length : recs.reduce((s, r) => s + r.delay, 0);
    };
    // RANK.EQ among the kept siblings: 1 + how many are larger; an empty cell has no rank.
    const rankOf = (v: number | null, among: Array<number | null>) =>
      v === null ? null : 1 + among.filter((x) => x !== null && x > v).length;
    const want = (row: string | null | undefined, col: string | null | undefined) =>
      (['count', 'sum'] as const).flatMap((m) => {
        const v = measure(row, col, m);
        const rankInRow =
          col === null || col === undefined
            ? null
            : rankOf(
                v,
                keptColumns.map((c) => measure(row, c, m)),
              );
        const rankInColumn =
          row === null || row === undefined
            ? null
            : rankOf(
                v,
                keptRows.map((r) => measure(r, col, m)),
              );
        return m === 'count' ? [v, rankInRow, rankInColumn] : [rankInRow, rankInColumn];
      });
    const columnIds = [...keptColumns, undefined];
    let otherRowRanks = 0;
    let otherColumnRanks = 0;
    for (const row of got.rows) {
      const id = row.other === undefined ? String(row.key[0]) : undefined;
      columnIds.forEach((c, j) => {
        expect({ at: [id, c], got: row.cells[j] }).toEqual({ at: [id, c], got: want(id, c) });
        if (id === undefined && row.cells[j][1] !== null) otherRowRanks++;
        if (c === undefined && row.cells[j][2] !== null) otherColumnRanks++;
      });
      expect({ at: [id, 'total'], got: row.total }).toEqual({ at: [id, 'total'], got: want(id, null) });
    }
    columnIds.forEach((c, j) =>
      expect({ at: ['total', c], got: got.columnTotals[j] }).toEqual({ at: ['total', c], got: want(null, c) }),
    );
    expect(got.grandTotal).toEqual(want(null, null));
    expect(otherRowRanks).toBe(keptColumns.length);
    expect(otherColumnRanks).toBe(keptRows.length);
  });
});

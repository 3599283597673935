import { parse as parseCsv } from 'csv-parse/sync';
import { flights20k, movies, type Rec } from './support/datasets';
import { analyticsOracle, type OracleAxis, type OracleSpec } from './support/analytics-oracle';
import { useStackWithAnalyst } from './support/stack';

/*
 * CROSSTAB.EXECUTE's analytics end to end through JSON-RPC on the sample indexes (flights-20k has
 * timestamps, movies has blanks): every new parameter once, compared with the plain-JS oracle; drill-
 * through queries run back through QUERIES.EXECUTE, cell by cell; and every new parameter's bad input.
 */

type Key = Array<string | number | null>;
interface JsonTable {
  rowFields: string[];
  columns: Key[];
  columnQueries: Array<string | null>;
  rows: Array<{ key: Key; query?: string; cells: Array<Array<number | null>>; total: Array<number | null> }>;
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
  rowsFilteredOut: number;
  columnsFilteredOut: number;
}
interface TableResult {
  contentType: string;
  data: JsonTable;
}

const FLIGHTS = flights20k();
const MOVIES = movies();
const close = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

describe('CROSSTAB.EXECUTE analytics over JSON-RPC', () => {
  const env = useStackWithAnalyst();
  const call = <T>(method: string, params: unknown) => env.stack().call<T>(env.analyst(), method, params);
  const table = async (params: Record<string, unknown>): Promise<JsonTable> => {
    const res = await call<TableResult>('CROSSTAB.EXECUTE', { format: 'json', cache: false, ...params });
    if (!res.data) throw new Error(`CROSSTAB.EXECUTE failed: ${JSON.stringify(res.error)}`);
    return res.data.data;
  };
  const count = async (index: string, query: string): Promise<number> => {
    const res = await call<{ total: number }>('QUERIES.EXECUTE', { index, query, pageSize: 1, cache: false });
    if (!res.data) throw new Error(`QUERIES.EXECUTE ${query} failed: ${JSON.stringify(res.error)}`);
    return res.data.total;
  };

  function expectOracle(got: JsonTable, records: Rec[], spec: OracleSpec): void {
    const want = analyticsOracle(records, spec);
    expect(got.columns).toEqual(want.columns);
    expect(got.rows.map((r) => r.key)).toEqual(want.rows.map((r) => r.key));
    expect(got.rowsFilteredOut).toBe(want.rowsFilteredOut);
    const same = (a: Array<number | null>, b: Array<number | null>, where: string) =>
      expect({ where, ok: a.length === b.length && a.every((x, i) => close(x, b[i])), a, b }).toMatchObject({
        where,
        ok: true,
      });
    got.rows.forEach((r, i) => {
      r.cells.forEach((c, j) => same(c, want.rows[i].cells[j], `${JSON.stringify(r.key)}/${j}`));
      same(r.total, want.rows[i].total, `${JSON.stringify(r.key)}/total`);
    });
    got.columnTotals.forEach((c, j) => same(c, want.columnTotals[j], `total/${j}`));
    same(got.grandTotal, want.grandTotal, 'grand total');
  }

  const date = (dateGroup: string): OracleAxis => ({ field: 'date', type: 'date', dateGroup });

  it('dateGroup in a time zone where the day changes, Median, Percentile, StdDev, CountDistinct and a formula', async () => {
    const params = {
      index: 'flights',
      query: 'origin:SFO',
      rows: [{ field: 'date', dateGroup: 'week' }],
      columns: [{ field: 'date', dateGroup: 'dayOfWeek' }],
      timeZone: 'Asia/Tokyo',
      totals: [
        { name: 'Flights', aggregationType: 'Count' },
        { name: 'Median delay', aggregationType: 'Median', field: 'delay' },
        { name: 'P90', aggregationType: 'Percentile', field: 'delay', percentile: 90 },
        { name: 'Spread', aggregationType: 'StdDev', field: 'delay' },
        { name: 'Places', aggregationType: 'CountDistinct', field: 'destination' },
        { name: 'Delay', aggregationType: 'Sum', field: 'delay' },
        { name: 'Per flight', formula: '[Delay] / [Flights]' },
      ],
      subtotals: true,
    };
    const got = await table(params);
    expect(got.rowFields).toEqual(['date (week)']);
    // A week key is ISO (2001-W01), a weekday 1 (Monday) to 7.
    expect(got.rows[0].key[0]).toMatch(/^2001-W\d\d$/);
    expect(got.columns.map((c) => c[0])).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expectOracle(
      got,
      FLIGHTS.filter((f) => f.origin === 'SFO'),
      {
        rows: [date('week')],
        columns: [date('dayOfWeek')],
        timeZone: 'Asia/Tokyo',
        subtotals: true,
        totals: [
          { agg: 'Count' },
          { agg: 'Median', field: 'delay' },
          { agg: 'Percentile', field: 'delay', percentile: 90 },
          { agg: 'StdDev', field: 'delay' },
          { agg: 'CountDistinct', field: 'destination' },
          { agg: 'Sum', field: 'delay' },
          { formula: { op: '/', a: 5, b: 0 } },
        ],
      },
    );
  });

  it.each(['year', 'quarter', 'month', 'week', 'day', 'hour', 'monthOfYear', 'dayOfWeek', 'hourOfDay'])(
    'dateGroup %s in America/Chicago: every key and count as the oracle has it',
    async (group) => {
      const got = await table({
        index: 'flights',
        query: 'origin:ORD',
        rows: [{ field: 'date', dateGroup: group }],
        timeZone: 'America/Chicago',
        totals: [{ aggregationType: 'Count' }],
      });
      expectOracle(
        got,
        FLIGHTS.filter((f) => f.origin === 'ORD'),
        { rows: [date(group)], columns: [], timeZone: 'America/Chicago', subtotals: false, totals: [{ agg: 'Count' }] },
      );
    },
  );

  it('bins, rowFilter and columnFilter with the counts they leave out, and showAs running and differences', async () => {
    const got = await table({
      index: 'flights',
      rows: [{ field: 'delay', bin: { width: 30, origin: -15 } }],
      columns: [{ field: 'date', dateGroup: 'month' }],
      timeZone: 'America/Los_Angeles',
      totals: [
        { aggregationType: 'Count' },
        { aggregationType: 'Count', showAs: 'runningTotal' },
        { aggregationType: 'Average', field: 'distance', showAs: 'differenceFromPrevious' },
        { aggregationType: 'Count', showAs: 'percentDifferenceFromPrevious' },
      ],
      rowFilter: { measure: 0, op: '>=', value: 100 },
    });
    expect(got.rowsFilteredOut).toBeGreaterThan(0);
    // The running total of the last row is the sum of the counts above it.
    const rows = got.rows;
    expect(rows[rows.length - 1].total[1]).toBe(rows.reduce((s, r) => s + (r.total[0] ?? 0), 0));
    expectOracle(got, FLIGHTS, {
      rows: [{ field: 'delay', type: 'number', bin: { width: 30, origin: -15 } }],
      columns: [date('month')],
      timeZone: 'America/Los_Angeles',
      subtotals: false,
      totals: [
        { agg: 'Count' },
        { agg: 'Count', showAs: 'runningTotal' },
        { agg: 'Average', field: 'distance', showAs: 'differenceFromPrevious' },
        { agg: 'Count', showAs: 'percentDifferenceFromPrevious' },
      ],
      rowFilter: { measure: 0, op: '>=', value: 100 },
    });
    const filteredColumns = await table({
      index: 'flights',
      rows: ['origin'],
      columns: [{ field: 'destination' }],
      totals: [{ aggregationType: 'Count' }],
      columnFilter: { measure: 0, op: '>', value: 500 },
    });
    expect(filteredColumns.columnsFilteredOut).toBeGreaterThan(0);
    const busy = new Map<string, number>();
    for (const f of FLIGHTS) busy.set(String(f.destination), (busy.get(String(f.destination)) ?? 0) + 1);
    expect(filteredColumns.columns.map((c) => c[0])).toEqual(
      [...busy]
        .filter(([, n]) => n > 500)
        .map(([k]) => k)
        .sort(),
    );
    expect(filteredColumns.grandTotal).toEqual([FLIGHTS.length]);
  });

  it('a bin is labelled [low, high) in HTML and CSV, and the bounds are the JSON key', async () => {
    const params = {
      index: 'flights',
      rows: [{ field: 'delay', bin: { width: 30 } }],
      totals: [{ aggregationType: 'Count' }],
    };
    const html = await call<{ data: string }>('CROSSTAB.EXECUTE', params);
    expect(html.data?.data).toContain('[0, 30)');
    const csv = await call<{ data: string }>('CROSSTAB.EXECUTE', { ...params, format: 'csv' });
    const lines = parseCsv(csv.data!.data) as string[][];
    expect(lines.map((l) => l[0])).toContain('[-30, 0)');
    const json = await table(params);
    expect(json.rows.map((r) => r.key[0])).toContain(-30);
  });

  /** Every cell's records, fetched back with the row and column queries, are as many as the cell counts. */
  async function expectDrillThrough(index: string, query: string, params: Record<string, unknown>): Promise<number> {
    const got = await table({ index, query, totals: [{ aggregationType: 'Count' }], ...params });
    let checked = 0;
    for (const row of got.rows) {
      expect(row.query).toBeDefined();
      expect(await count(index, `(${query}) AND ${row.query}`)).toBe(row.total[0]);
      for (const [j, cell] of row.cells.entries()) {
        const colQuery = got.columnQueries[j];
        expect(colQuery).not.toBeNull();
        expect(await count(index, `(${query}) AND ${row.query} AND ${colQuery}`)).toBe(cell[0] ?? 0);
        checked++;
      }
    }
    return checked;
  }

  it('drill-through on dates in a zone, bins and weekdays: each cell query returns exactly its count', async () => {
    const checked = await expectDrillThrough('flights', 'origin:SFO OR origin:LAX', {
      rows: [{ field: 'date', dateGroup: 'week' }],
      columns: [{ field: 'delay', bin: { width: 45, origin: -10 } }],
      timeZone: 'America/New_York',
    });
    expect(checked).toBeGreaterThan(50);
    expect(
      await expectDrillThrough('flights', 'destination:ORD AND date:[2001-01-05 TO 2001-01-20]', {
        rows: [{ field: 'date', dateGroup: 'dayOfWeek' }],
        columns: [{ field: 'date', dateGroup: 'hour' }],
        timeZone: 'Australia/Adelaide',
        columnLimit: 24,
      }),
    ).toBeGreaterThan(30);
  });

  it('drill-through on text with blanks and case: (blank) is "has no value", text is exact', async () => {
    const checked = await expectDrillThrough('movies', '*', {
      rows: ['Major Genre'],
      columns: [{ field: 'MPAA Rating' }],
    });
    expect(checked).toBeGreaterThan(50);
    const got = await table({ index: 'movies', rows: ['Major Genre'], totals: [{ aggregationType: 'Count' }] });
    const blank = got.rows.find((r) => r.key[0] === null)!;
    expect(blank.query).toBe('NOT Major\\ Genre:*');
    expect(blank.total[0]).toBe(MOVIES.filter((m) => m['Major Genre'] === null || m['Major Genre'] === '').length);
  });

  it('an hour of the day over three months (90 periods of each hour, in a zone): every key’s query counts its cell', async () => {
    for (const timeZone of ['UTC', 'America/Los_Angeles']) {
      const got = await table({
        index: 'flights',
        rows: [{ field: 'date', dateGroup: 'hourOfDay' }],
        totals: [{ aggregationType: 'Count' }],
        timeZone,
      });
      expect(got.rows.length).toBeGreaterThan(10);
      for (const row of got.rows) {
        expect(row.query).toEqual(expect.any(String));
        expect(await count('flights', row.query!)).toBe(row.total[0]);
      }
    }
  });

  it('a saved report keeps every new parameter, and REPORTS.METADATA runs again to the same table', async () => {
    const params = {
      index: 'flights',
      rows: [{ field: 'date', dateGroup: 'month' }],
      columns: [{ field: 'delay', bin: { width: 60 } }],
      timeZone: 'Europe/Paris',
      totals: [
        { name: 'n', aggregationType: 'Count' },
        { name: 'med', aggregationType: 'Median', field: 'delay' },
        { name: 'ratio', formula: '[med] / [n]', showAs: 'runningTotal' },
      ],
      rowFilter: { measure: 0, op: '>', value: 10 },
      format: 'json',
    };
    const saved = await call<TableResult & { report: { guid: string } }>('CROSSTAB.EXECUTE', {
      ...params,
      saveReport: { name: 'Delays by month' },
    });
    const meta = await call<{ method: string; params: Record<string, unknown> }>('REPORTS.METADATA', {
      guid: saved.data!.report.guid,
    });
    expect(meta.data?.params).toMatchObject({ timeZone: 'Europe/Paris', rowFilter: params.rowFilter });
    const again = await call<TableResult>(meta.data!.method, meta.data!.params);
    expect(again.data?.data).toEqual(saved.data?.data);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a dateGroup on a text field',
      { rows: [{ field: 'origin', dateGroup: 'month' }] },
      /rows\[0\]\.dateGroup: "origin" is string, not a date/,
    ],
    [
      'a bin on a text field',
      { rows: [{ field: 'origin', bin: { width: 5 } }] },
      /rows\[0\]\.bin: "origin" is string, not a number/,
    ],
    [
      'an unknown dateGroup',
      { rows: [{ field: 'date', dateGroup: 'fortnight' }] },
      /rows\[0\]\.dateGroup must be one of/,
    ],
    [
      'a bin width of 0',
      { rows: [{ field: 'delay', bin: { width: 0 } }] },
      /rows\[0\]\.bin\.width must be a number greater than 0/,
    ],
    ['an unknown time zone', { timeZone: 'Mars/Olympus' }, /timeZone "Mars\/Olympus" is not a known IANA time zone/],
    [
      'a percentile of 100',
      { totals: [{ aggregationType: 'Percentile', field: 'delay', percentile: 100 }] },
      /totals\[0\]\.percentile must be a number between 0 and 100/,
    ],
    [
      'a Percentile without percentile',
      { totals: [{ aggregationType: 'Percentile', field: 'delay' }] },
      /totals\[0\]\.percentile is required/,
    ],
    [
      'a Median of a text field',
      { totals: [{ aggregationType: 'Median', field: 'origin' }] },
      /Median needs a numeric field, but "origin" is string/,
    ],
    [
      'CountDistinct without a field',
      { totals: [{ aggregationType: 'CountDistinct' }] },
      /totals\[0\]\.field is required with CountDistinct/,
    ],
    [
      'a formula with a syntax error',
      {
        totals: [
          { aggregationType: 'Count', name: 'n' },
          { name: 'r', formula: '[n] / (2' },
        ],
      },
      /totals\[1\]\.formula: expected "\)" but found the end at position 9/,
    ],
    [
      'a formula naming an unknown total',
      {
        totals: [
          { aggregationType: 'Count', name: 'n' },
          { name: 'r', formula: '[n] / [cost]' },
        ],
      },
      /unknown total \[cost\] at position 7/,
    ],
    [
      'formulas in a cycle',
      {
        totals: [
          { name: 'a', formula: '[b] + 1' },
          { name: 'b', formula: '[a] * 2' },
        ],
      },
      /the formula refers to itself: \[a\] → \[b\] → \[a\]/,
    ],
    ['a formula without a name', { totals: [{ formula: '1 + 1' }] }, /totals\[0\]\.name is required with a formula/],
    [
      'a filter on a total that is not there',
      { rowFilter: { measure: 3, op: '>', value: 1 } },
      /rowFilter\.measure must be an index into totals, from 0 to 0/,
    ],
    [
      'a filter with an unknown operator',
      { rowFilter: { measure: 0, op: '~', value: 1 } },
      /rowFilter\.op must be one of/,
    ],
    [
      'a bin width that would make more bins than the cell limit',
      { rows: [{ field: 'delay', bin: { width: 0.001 } }] },
      /rows\[0\]\.bin\.width 0\.001 makes \d+ bins of "delay" \(-?\d+ to \d+\); with 1 total\(s\) the crosstab may have at most 100000 cells/,
    ],
    [
      'an unknown showAs',
      { totals: [{ aggregationType: 'Count', showAs: 'runningAverage' }] },
      /totals\[0\]\.showAs must be one of/,
    ],
  ])('%s is a 400 naming the parameter', async (_, over, detail) => {
    const res = await call('CROSSTAB.EXECUTE', {
      index: 'flights',
      rows: ['origin'],
      totals: [{ aggregationType: 'Count' }],
      ...over,
    });
    expect(res.error?.code).toBe(400);
    expect(res.error?.data.detail).toMatch(detail);
  });
});

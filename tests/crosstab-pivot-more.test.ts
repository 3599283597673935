import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { parse as parseCsv } from 'csv-parse/sync';
import { expectClose, useIndexedRecords } from './support/indexed-records';
import { ticketRecords } from './support/ticket-records';

/*
 * The exact "Other (N)" row and column, the showAs modes that read the parent group, ranks and moving
 * averages, and a manual axis order, through JSON-RPC on a generated index; every number is compared
 * with SQL written here and run by DuckDB on the same records.
 */

type Key = Array<string | number | boolean | null>;
type Values = Array<number | null>;
interface JsonRow {
  key: Key;
  query?: string;
  cells: Values[];
  total: Values;
  subtotal?: true;
  other?: number;
}
interface JsonTable {
  columns: Key[];
  columnQueries: Array<string | null>;
  rows: JsonRow[];
  columnTotals: Values[];
  grandTotal: Values;
  rowsOmitted: number;
  columnsOmitted: number;
  rowsFilteredOut: number;
  otherColumn?: number;
}

const TEAMS = Array.from({ length: 14 }, (_, i) => `T${String(i + 1).padStart(2, '0')}`);
const PRIORITIES = ['Critical', 'High', 'Medium', 'Low', 'Trivial', ''];
const REGIONS = ['North', 'South', 'East', 'West', 'Central'];
const CHANNELS = ['web', 'phone', 'mail'];
const RECORDS = 3000;

const records = () =>
  ticketRecords({
    seed: 7,
    count: RECORDS,
    teams: TEAMS,
    priorities: PRIORITIES,
    regions: REGIONS,
    channels: CHANNELS,
    agents: 120,
    noHoursEvery: 17,
  });

/** The totals every Other test reads, and the same aggregates in DuckDB's SQL, in order. */
const TOTALS = [
  { name: 'N', aggregationType: 'Count' },
  { name: 'Hours', aggregationType: 'Sum', field: 'hours' },
  { name: 'Median', aggregationType: 'Median', field: 'hours' },
  { name: 'Agents', aggregationType: 'CountDistinct', field: 'agent' },
  { name: 'Spread', aggregationType: 'StdDev', field: 'hours' },
  { name: 'P90', aggregationType: 'Percentile', field: 'hours', percentile: 90 },
];
const AGGREGATES = `count(*) AS a0, sum(hours) AS a1, quantile_cont(hours, 0.5) AS a2,
  count(DISTINCT agent) AS a3, stddev_samp(hours) AS a4, quantile_cont(hours, 0.9) AS a5`;
const valuesOf = (r: Record<string, unknown> | undefined): Values =>
  [0, 1, 2, 3, 4, 5].map((i) => (r?.[`a${i}`] === null || r?.[`a${i}`] === undefined ? null : Number(r[`a${i}`])));

describe('CROSSTAB.EXECUTE: Other (N), parent shares, ranks, moving averages and manual order', () => {
  const { sql, call, crosstab } = useIndexedRecords({
    index: 'tickets',
    records,
    // Blank text is the blank key, as Quarry groups it.
    table: (file) => `CREATE TABLE t AS SELECT id, nullif(team, '') AS team, nullif(priority, '') AS priority, region,
      CAST(hours AS DOUBLE) AS hours, agent, channel FROM read_json('${file}')`,
  });
  const json = (params: Record<string, unknown>) => crosstab<JsonTable>({ format: 'json', ...params });
  const count = async (query: string): Promise<number> => {
    const res = await call<{ total: number }>('QUERIES.EXECUTE', {
      index: 'tickets',
      query,
      pageSize: 1,
      cache: false,
    });
    if (!res.data) throw new Error(`QUERIES.EXECUTE ${query} failed: ${JSON.stringify(res.error)}`);
    return res.data.total;
  };
  const refused = async (params: Record<string, unknown>): Promise<string> => {
    const res = await call('CROSSTAB.EXECUTE', { index: 'tickets', rows: ['team'], totals: [TOTALS[0]], ...params });
    expect(res.error?.code).toBe(400);
    return String((res.error?.data as { detail?: string } | undefined)?.detail ?? res.error?.message);
  };
  const inList = (values: Key) =>
    `(${values
      .filter((v) => v !== null)
      .map((v) => `'${String(v)}'`)
      .join(', ')})`;
  /** SQL true for the records whose `col` is none of `kept` (null is kept only when listed). */
  const notKept = (col: string, kept: Key) =>
    `NOT (coalesce(${col} IN ${inList(kept)}, false)${kept.includes(null) ? ` OR ${col} IS NULL` : ''})`;
  /** Teams by count, largest first, ties by label, blank last: the order rowOrder by value gives. */
  const teamsByCount = async (where = 'true') =>
    (
      await sql(
        `SELECT team, count(*) AS n FROM t WHERE ${where} GROUP BY team ORDER BY n DESC, team IS NULL, lower(team), team`,
      )
    ).map((r) => ({ team: (r.team ?? null) as string | null, n: Number(r.n) }));

  const byCount = { by: 'value', measure: 0, direction: 'desc' };
  /** Two row levels with subtotals, the top two teams and regions, and both Others. */
  const SUBTOTALED = {
    rows: ['team', { field: 'priority' }],
    columns: [{ field: 'region' }],
    rowOrder: byCount,
    columnOrder: byCount,
    rowLimit: 2,
    columnLimit: 2,
    otherRow: true,
    otherColumn: true,
    subtotals: true,
  };

  it('otherRow: every aggregation of the Other row is computed from the omitted records, and its query selects them', async () => {
    const got = await json({
      rows: ['team'],
      columns: [{ field: 'region' }],
      totals: TOTALS,
      rowOrder: byCount,
      rowLimit: 4,
      otherRow: true,
    });
    const ranked = await teamsByCount();
    const kept = ranked.slice(0, 4).map((r) => r.team);
    expect(got.rows.slice(0, 4).map((r) => r.key)).toEqual(kept.map((k) => [k]));
    const other = got.rows[4];
    expect(got.rows).toHaveLength(5);
    expect(other).toMatchObject({ key: [], other: ranked.length - 4 });
    expect(got.rowsOmitted).toBe(ranked.length - 4);
    const cells = await sql(`SELECT region, ${AGGREGATES} FROM t WHERE ${notKept('team', kept)} GROUP BY region`);
    got.columns.forEach((c, j) =>
      expectClose(other.cells[j], valuesOf(cells.find((x) => x.region === c[0])), `Other/${String(c[0])}`),
    );
    const [total] = await sql(`SELECT ${AGGREGATES} FROM t WHERE ${notKept('team', kept)}`);
    expectClose(other.total, valuesOf(total), 'Other/total');
    // The Other row and the kept rows add up to every record; the grand total did not change.
    const [all] = await sql(`SELECT ${AGGREGATES} FROM t`);
    expectClose(got.grandTotal, valuesOf(all), 'grand total');
    expect(got.rows.reduce((s, r) => s + (r.total[0] ?? 0), 0)).toBe(RECORDS);
    // Its drill query counts exactly its records through QUERIES.EXECUTE.
    expect(other.query).toBeDefined();
    expect(await count(other.query!)).toBe(other.total[0]);
    expect(await count(`(${other.query!}) AND ${got.columnQueries[0]!}`)).toBe(other.cells[0][0] ?? 0);
  });

  it('otherRow with rowFilter: Other stands for the values filtered out and those the limit left out', async () => {
    const got = await json({
      rows: ['team'],
      totals: TOTALS,
      rowOrder: byCount,
      rowFilter: { measure: 0, op: '<', value: 250 },
      rowLimit: 3,
      otherRow: true,
    });
    const ranked = await teamsByCount();
    const passing = ranked.filter((r) => r.n < 250);
    const kept = passing.slice(0, 3).map((r) => r.team);
    expect(got.rows.slice(0, 3).map((r) => r.key)).toEqual(kept.map((k) => [k]));
    expect(got.rowsFilteredOut).toBe(ranked.length - passing.length);
    expect(got.rows[3].other).toBe(ranked.length - 3);
    const [total] = await sql(`SELECT ${AGGREGATES} FROM t WHERE ${notKept('team', kept)}`);
    expectClose(got.rows[3].total, valuesOf(total), 'Other/total');
  });

  it('otherRow on a bin axis: the Other row counts the records of the bins not kept, blanks included', async () => {
    const got = await json({
      rows: [{ field: 'hours', bin: { width: 25 } }],
      totals: [TOTALS[0], TOTALS[2]],
      rowOrder: byCount,
      rowLimit: 2,
      otherRow: true,
    });
    const bins = await sql(
      `SELECT floor(hours / 25) * 25 AS bin, count(*) AS n FROM t GROUP BY 1 ORDER BY n DESC, bin IS NULL, bin`,
    );
    const kept = bins.slice(0, 2).map((b) => Number(b.bin));
    expect(got.rows.slice(0, 2).map((r) => r.key)).toEqual(kept.map((k) => [k]));
    expect(got.rows[2].other).toBe(bins.length - 2);
    const [other] = await sql(
      `SELECT ${AGGREGATES} FROM t WHERE hours IS NULL OR floor(hours / 25) * 25 NOT IN (${kept.join(', ')})`,
    );
    expectClose(got.rows[2].total, [valuesOf(other)[0], valuesOf(other)[2]], 'Other bins');
    expect(await count(got.rows[2].query!)).toBe(got.rows[2].total[0]);
  });

  it('otherRow and otherColumn with subtotals: the corner, the subtotal rows and the Total row are exact; CSV and HTML agree', async () => {
    const params = { ...SUBTOTALED, totals: [TOTALS[0], TOTALS[2], TOTALS[3]] };
    const got = await json(params);
    const ranked = await teamsByCount();
    const keptTeams = ranked.slice(0, 2).map((r) => r.team);
    const regions = (
      await sql(`SELECT region, count(*) AS n FROM t GROUP BY region ORDER BY n DESC, lower(region)`)
    ).map((r) => r.region as string);
    const keptRegions = regions.slice(0, 2);
    expect(got.columns).toEqual([...keptRegions.map((r) => [r]), []]);
    expect(got.otherColumn).toBe(regions.length - 2);
    const three = (v: Values) => [v[0], v[2], v[3]];
    const aggregate = async (where: string) =>
      three(valuesOf((await sql(`SELECT ${AGGREGATES} FROM t WHERE ${where}`))[0]));
    const otherRegion = notKept('region', keptRegions);
    const otherTeam = notKept('team', keptTeams);
    const last = got.rows[got.rows.length - 1];
    expect(last.other).toBe(ranked.length - 2);
    expect(last.subtotal).toBeUndefined();
    // The corner: records of neither a kept team nor a kept region.
    expectClose(last.cells[2], await aggregate(`${otherTeam} AND ${otherRegion}`), 'Other x Other');
    expectClose(last.cells[0], await aggregate(`${otherTeam} AND region = '${keptRegions[0]}'`), 'Other x region');
    expectClose(last.total, await aggregate(otherTeam), 'Other row total');
    // A team's subtotal row in the Other column, and the Total row's Other column over every team.
    const sub = got.rows.find((r) => r.subtotal && r.key[0] === keptTeams[0])!;
    expectClose(sub.cells[2], await aggregate(`team = '${keptTeams[0]}' AND ${otherRegion}`), 'subtotal x Other');
    expectClose(got.columnTotals[2], await aggregate(otherRegion), 'Total x Other');
    const leaf = got.rows.find((r) => r.key.length === 2 && r.key[1] !== null)!;
    expectClose(
      leaf.cells[2],
      await aggregate(`team = '${String(leaf.key[0])}' AND priority = '${String(leaf.key[1])}' AND ${otherRegion}`),
      'cell x Other',
    );
    // The Other column's query selects its records.
    expect(await count(got.columnQueries[2]!)).toBe(got.columnTotals[2][0]);

    const csv = parseCsv(await crosstab<string>({ ...params, format: 'csv' }), {
      relax_column_count: true,
    }) as string[][];
    const otherLine = csv.find((l) => l[0] === `Other (${ranked.length - 2})`)!;
    expect(otherLine).toBeDefined();
    expect(csv[0].some((h) => h.startsWith(`Other (${regions.length - 2})`))).toBe(true);
    expect(Number(otherLine[2])).toBe(last.cells[0][0]);
    const html = await crosstab<string>({ ...params, format: 'html' });
    expect(html).toContain(
      `<tr class="quarry-other"><th scope="row" colspan="2" class="quarry-other" data-other="${ranked.length - 2}">Other (${ranked.length - 2})</th>`,
    );
    expect(html).toContain(`>Other (${regions.length - 2})</th>`);
  });

  it('XLSX and a chart show the Other row', async () => {
    const params = { rows: ['team'], totals: [TOTALS[0]], rowOrder: byCount, rowLimit: 5, otherRow: true };
    const ranked = await teamsByCount();
    const [other] = await sql(
      `SELECT count(*) AS n FROM t WHERE ${notKept(
        'team',
        ranked.slice(0, 5).map((r) => r.team),
      )}`,
    );
    const book = new ExcelJS.Workbook();
    // exceljs's types ask for an ArrayBuffer; it reads a Buffer.
    await book.xlsx.load(
      Buffer.from(await crosstab<string>({ ...params, format: 'xlsx' }), 'base64') as unknown as ArrayBuffer,
    );
    const sheet = book.worksheets[0];
    const rowAt = [...Array(sheet.rowCount).keys()]
      .map((i) => i + 1)
      .find((i) => sheet.getCell(i, 1).value === `Other (${ranked.length - 5})`);
    expect(rowAt).toBeDefined();
    expect(sheet.getCell(rowAt!, 2).value).toBe(Number(other.n));
    const svg = await crosstab<string>({
      ...params,
      chartType: 'Column2D',
      imageFormat: 'svg',
      width: 800,
      height: 500,
    });
    expect(svg).toContain(`Other (${ranked.length - 5})`);
    const png = await crosstab<string>({ ...params, chartType: 'Column2D', width: 800, height: 500 });
    expect(Buffer.from(png, 'base64').subarray(1, 4).toString()).toBe('PNG');
    // QUARRY_KEEP_DIR=<dir> keeps what a person sees, to look at: the chart, and the table with both Others.
    const keep = process.env.QUARRY_KEEP_DIR;
    if (keep) {
      fs.writeFileSync(path.join(keep, 'other-chart.png'), Buffer.from(png, 'base64'));
      const both = { ...SUBTOTALED, totals: [TOTALS[0], TOTALS[2]] };
      fs.writeFileSync(path.join(keep, 'other.html'), await crosstab<string>({ ...both, format: 'html' }));
      fs.writeFileSync(
        path.join(keep, 'other.xlsx'),
        Buffer.from(await crosstab<string>({ ...both, format: 'xlsx' }), 'base64'),
      );
    }
  });

  it('percentOfParentRow and percentOfParentColumn: shares of the enclosing group, of the Total at the outermost level', async () => {
    const got = await json({
      rows: ['team', { field: 'priority' }],
      columns: [{ field: 'region' }, { field: 'channel' }],
      totals: [
        { name: 'R', aggregationType: 'Sum', field: 'hours', showAs: 'percentOfParentRow' },
        { name: 'C', aggregationType: 'Sum', field: 'hours', showAs: 'percentOfParentColumn' },
      ],
      query: 'team:=T01 OR team:=T02 OR team:=T03',
      subtotals: true,
    });
    const where = `team IN ('T01', 'T02', 'T03')`;
    const sum = async (w: string) => {
      const [r] = await sql(`SELECT sum(hours) AS s FROM t WHERE ${where} AND ${w}`);
      return r.s === null ? null : Number(r.s);
    };
    const eq = (col: string, v: string | number | boolean | null) =>
      v === null ? `${col} IS NULL` : `${col} = '${String(v)}'`;
    const rowWhere = (k: Key) => ['true', ...k.map((v, i) => eq(i === 0 ? 'team' : 'priority', v))].join(' AND ');
    const colWhere = (k: Key) => ['true', ...k.map((v, i) => eq(i === 0 ? 'region' : 'channel', v))].join(' AND ');
    const pct = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : (a / b) * 100);
    // A leaf row, a subtotal row, and the outermost level against the Total.
    for (const row of [got.rows[0], got.rows.find((r) => r.subtotal)!]) {
      for (const j of [0, got.columns.findIndex((c) => c.length === 1)]) {
        const c = got.columns[j];
        const here = await sum(`${rowWhere(row.key)} AND ${colWhere(c)}`);
        const parentRow = await sum(`${rowWhere(row.key.slice(0, -1))} AND ${colWhere(c)}`);
        const parentColumn = await sum(`${rowWhere(row.key)} AND ${colWhere(c.slice(0, -1))}`);
        expectClose(row.cells[j], [pct(here, parentRow), pct(here, parentColumn)], `${JSON.stringify(row.key)}/${j}`);
      }
    }
  });

  it('rankInColumn and rankInRow rank siblings 1 = largest, ties sharing a rank as RANK.EQ; movingAverage averages the window along the rows', async () => {
    const got = await json({
      rows: ['team'],
      columns: [{ field: 'region' }],
      totals: [
        { name: 'RC', aggregationType: 'Count', showAs: 'rankInColumn' },
        { name: 'RR', aggregationType: 'Count', showAs: 'rankInRow' },
        { name: 'MA', aggregationType: 'Sum', field: 'hours', showAs: 'movingAverage', window: 3 },
      ],
    });
    // Every team × region, empty where no record falls (a rank or an average skips it).
    const grid = await sql(`WITH teams AS (SELECT DISTINCT team FROM t), regions AS (SELECT DISTINCT region FROM t),
      cells AS (SELECT team, region, count(*) AS n, sum(hours) AS s FROM t GROUP BY ALL),
      g AS (SELECT teams.team, regions.region, n, s,
        row_number() OVER (PARTITION BY regions.region ORDER BY teams.team IS NULL, lower(teams.team), teams.team) AS pos
        FROM teams CROSS JOIN regions LEFT JOIN cells ON cells.team IS NOT DISTINCT FROM teams.team AND cells.region = regions.region)
      SELECT team, region, n, s,
        CASE WHEN n IS NULL THEN NULL ELSE rank() OVER (PARTITION BY region, n IS NULL ORDER BY n DESC) END AS rc,
        CASE WHEN n IS NULL THEN NULL ELSE rank() OVER (PARTITION BY team, n IS NULL ORDER BY n DESC) END AS rr,
        avg(s) OVER (PARTITION BY region ORDER BY pos ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS ma
      FROM g`);
    let ties = 0;
    for (const row of got.rows)
      got.columns.forEach((c, j) => {
        const g = grid.find((x) => (x.team ?? null) === row.key[0] && x.region === c[0])!;
        const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
        expectClose(row.cells[j], [num(g.rc), num(g.rr), num(g.ma)], `${String(row.key[0])}/${String(c[0])}`);
        if (got.rows.some((o) => o !== row && o.cells[j][0] === row.cells[j][0] && row.cells[j][0] !== null)) ties++;
      });
    // The data has ties, so the tie rule was exercised.
    expect(ties).toBeGreaterThan(0);
  });

  it('order: listed keys first in that order, the rest in the default order, absent values absent; with reverse, rowLimit and subtotals', async () => {
    const order = ['Critical', 'High', 'Medium', 'Low', 'Blocker'];
    const got = await json({ rows: [{ field: 'priority', order }], totals: [TOTALS[0]] });
    expect(got.rows.map((r) => r.key[0])).toEqual(['Critical', 'High', 'Medium', 'Low', 'Trivial', null]);
    const counts = await sql(`SELECT priority, count(*) AS n FROM t GROUP BY priority`);
    for (const r of got.rows) expect(r.total[0]).toBe(Number(counts.find((c) => (c.priority ?? null) === r.key[0])!.n));
    const reversed = await json({ rows: [{ field: 'priority', order, reverse: true }], totals: [TOTALS[0]] });
    expect(reversed.rows.map((r) => r.key[0])).toEqual(['Low', 'Medium', 'High', 'Critical', 'Trivial', null]);
    // rowLimit keeps the first keys in the manual order, whatever their values.
    const limited = await json({
      rows: [{ field: 'priority', order: ['Low', 'Critical'] }],
      totals: [TOTALS[0]],
      rowOrder: byCount,
      rowLimit: 3,
      otherRow: true,
    });
    const byN = counts
      .filter((c) => c.priority !== 'Low' && c.priority !== 'Critical')
      .sort((a, b) => Number(b.n) - Number(a.n))
      .map((c) => c.priority ?? null);
    expect(limited.rows.map((r) => r.key)).toEqual([['Low'], ['Critical'], [byN[0]], []]);
    // An inner level's order holds under each outer key, subtotals after each group; columns too.
    const nested = await json({
      rows: ['team', { field: 'priority', order: ['Low', 'High'] }],
      columns: [{ field: 'region', order: ['West', 'North'] }],
      totals: [TOTALS[0]],
      query: 'team:=T01 OR team:=T02',
      subtotals: true,
    });
    expect(nested.rows.filter((r) => r.key[0] === 'T01').map((r) => r.key[1] ?? (r.subtotal ? 'sub' : null))).toEqual([
      'Low',
      'High',
      'Critical',
      'Medium',
      'Trivial',
      null,
      'sub',
    ]);
    expect(nested.columns.map((c) => c[0])).toEqual(['West', 'North', 'Central', 'East', 'South']);
  });

  it.each([
    [{ otherRow: true }, /otherRow needs rowLimit/],
    [{ otherColumn: true, columns: [{ field: 'region' }] }, /otherColumn needs columns and columnLimit/],
    [{ otherRow: 'yes', rowLimit: 2 }, /otherRow must be a boolean/],
    [
      { totals: [{ aggregationType: 'Count', showAs: 'movingAverage', window: 0 }] },
      /totals\[0\]\.window must be an integer between 2 and 100/,
    ],
    [
      { totals: [{ aggregationType: 'Count', showAs: 'movingAverage', window: 101 }] },
      /totals\[0\]\.window must be an integer between 2 and 100/,
    ],
    [
      { totals: [{ aggregationType: 'Count', showAs: 'movingAverage', window: 2.5 }] },
      /totals\[0\]\.window must be an integer/,
    ],
    [
      { totals: [{ aggregationType: 'Count', showAs: 'movingAverage' }] },
      /totals\[0\]\.window is required with showAs movingAverage/,
    ],
    [{ totals: [{ aggregationType: 'Count', window: 3 }] }, /totals\[0\]\.window goes with showAs movingAverage only/],
    [{ totals: [{ aggregationType: 'Count', showAs: 'rank' }] }, /totals\[0\]\.showAs must be one of/],
    [
      { rows: [{ field: 'priority', order: ['High', 'Low', 'High'] }] },
      /rows\[0\]\.order\[2\] repeats "High" \(already at order\[0\]\)/,
    ],
    [
      { rows: [{ field: 'priority', order: Array.from({ length: 1001 }, (_, i) => `v${i}`) }] },
      /rows\[0\]\.order may have at most 1000 items/,
    ],
    [{ rows: [{ field: 'priority', order: [{ x: 1 }] }] }, /rows\[0\]\.order\[0\] must be a key/],
    [
      { rows: [{ field: 'priority', order: ['x'.repeat(1001)] }] },
      /rows\[0\]\.order\[0\] must be at most 1000 characters/,
    ],
    [{ rows: [{ field: 'priority', order: 'High' }] }, /rows\[0\]\.order must be an array/],
  ])('bad input %#: a 400 naming the param', async (extra, message) => {
    expect(await refused(extra)).toMatch(message);
  });
});

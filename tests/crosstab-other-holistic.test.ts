import { expectClose, useIndexedRecords } from './support/indexed-records';
import { ticketRecords, type OtherTable, type Values } from './support/ticket-records';

/*
 * "Other (N)" with medians, percentiles, standard deviations and distinct counts, rows and columns both
 * limited, subtotals and a query, through JSON-RPC: every cell of the table (kept cells, subtotals, the
 * totals across every column and down every row, the Other row, the Other column and their corner) is
 * compared with the same aggregates written in SQL here and run by DuckDB on the same records. The
 * crosstab engine reads all of them in one pass over every record (the Other records folded into one
 * row and one column), so nothing here may come from another pass.
 */

const TEAMS = Array.from({ length: 9 }, (_, i) => `T${i + 1}`);
const PRIORITIES = ['High', 'Medium', 'Low', ''];
const REGIONS = ['North', 'South', 'East', 'West', 'Central', ''];
const CHANNELS = ['web', 'phone', 'mail'];

const records = () =>
  ticketRecords({
    seed: 41,
    count: 2500,
    teams: TEAMS,
    priorities: PRIORITIES,
    regions: REGIONS,
    channels: CHANNELS,
    agents: 80,
    noHoursEvery: 13,
    blankAgentEvery: 19,
  });

const TOTALS = [
  { aggregationType: 'Count' },
  { aggregationType: 'Median', field: 'hours' },
  { aggregationType: 'Percentile', field: 'hours', percentile: 90 },
  { aggregationType: 'StdDev', field: 'hours' },
  { aggregationType: 'CountDistinct', field: 'agent' },
  { aggregationType: 'Average', field: 'hours' },
  { aggregationType: 'Min', field: 'hours' },
  { aggregationType: 'Max', field: 'hours' },
];
const BY_HAND = `count(*) AS a0, quantile_cont(hours, 0.5) AS a1, quantile_cont(hours, 0.9) AS a2,
  stddev_samp(hours) AS a3, count(DISTINCT agent) AS a4, avg(hours) AS a5, min(hours) AS a6, max(hours) AS a7`;
const byCount = { by: 'value', measure: 0, direction: 'desc' };

describe('CROSSTAB.EXECUTE: Other row and column with holistic totals, every cell against DuckDB', () => {
  const { sql, crosstab } = useIndexedRecords({
    index: 'work',
    records,
    // Blank text is the blank key, as Quarry groups it; a blank agent is no value for a distinct count.
    table: (file) => `CREATE TABLE t AS SELECT nullif(team, '') AS team, nullif(priority, '') AS priority,
      nullif(region, '') AS region, CAST(hours AS DOUBLE) AS hours, nullif(agent, '') AS agent, channel
      FROM read_json('${file}')`,
  });
  const json = (params: Record<string, unknown>) => crosstab<OtherTable>({ format: 'json', totals: TOTALS, ...params });
  const byHand = async (where: string): Promise<Values> => {
    const [row] = await sql(`SELECT ${BY_HAND} FROM t WHERE ${where}`);
    return TOTALS.map((_, i) => (row[`a${i}`] === null ? null : Number(row[`a${i}`])));
  };
  const lit = (v: unknown) => `'${String(v).replace(/'/g, "''")}'`;
  const is = (col: string, v: unknown) => (v === null ? `${col} IS NULL` : `${col} = ${lit(v)}`);
  const noneOf = (col: string, kept: unknown[]) => `NOT coalesce(${kept.map((v) => is(col, v)).join(' OR ')}, false)`;
  /** An axis's outer keys by count under a filter, largest first, ties by label, blank last. */
  const ranked = async (col: string, where: string) =>
    (
      await sql(
        `SELECT ${col} AS k, count(*) AS n FROM t WHERE ${where} GROUP BY 1 ORDER BY n DESC, k IS NULL, lower(k), k`,
      )
    ).map((r) => (r.k ?? null) as string | null);

  it('rows and columns limited, subtotals, a query: kept cells, totals, both Others and the corner', async () => {
    const filter = `channel IN ('web', 'phone')`;
    const got = await json({
      query: 'channel:web OR channel:phone',
      rows: ['team', { field: 'priority' }],
      columns: [{ field: 'region' }],
      rowOrder: byCount,
      columnOrder: byCount,
      rowLimit: 3,
      columnLimit: 2,
      otherRow: true,
      otherColumn: true,
      subtotals: true,
    });
    const teams = await ranked('team', filter);
    const regions = await ranked('region', filter);
    const keptTeams = teams.slice(0, 3);
    const keptRegions = regions.slice(0, 2);
    // Blank keys exist and one of them is left out, so the Other records hold blanks.
    expect(teams).toContain(null);
    expect(regions).toContain(null);
    expect(got.columns).toEqual([...keptRegions.map((r) => [r]), []]);
    expect(got.otherColumn).toBe(regions.length - 2);
    const columnWhere = [...keptRegions.map((r) => is('region', r)), noneOf('region', keptRegions)];
    let checked = 0;
    for (const row of got.rows) {
      const rowWhere =
        row.other !== undefined
          ? noneOf('team', keptTeams)
          : row.key.map((v, i) => is(['team', 'priority'][i], v)).join(' AND ');
      if (row.other === undefined) expect(keptTeams).toContain(row.key[0]);
      for (const [j, where] of columnWhere.entries()) {
        expectClose(row.cells[j], await byHand(`${filter} AND ${rowWhere} AND ${where}`), `${row.key} x ${j}`);
        checked++;
      }
      expectClose(row.total, await byHand(`${filter} AND ${rowWhere}`), `${row.key} total`);
    }
    expect(got.rows[got.rows.length - 1].other).toBe(teams.length - 3);
    // Three kept teams with their subtotals, and the Other row.
    expect(got.rows.filter((r) => r.subtotal)).toHaveLength(3);
    expect(checked).toBeGreaterThan(3 * 3 * 3);
    for (const [j, where] of columnWhere.entries())
      expectClose(got.columnTotals[j], await byHand(`${filter} AND ${where}`), `Total x ${j}`);
    expectClose(got.grandTotal, await byHand(filter), 'grand total');
  });

  it('columns limited alone (rows not): the Other column of every row, its total over every row', async () => {
    const got = await json({
      rows: ['priority'],
      columns: [{ field: 'team' }],
      columnOrder: byCount,
      columnLimit: 4,
      otherColumn: true,
    });
    const teams = await ranked('team', 'true');
    const kept = teams.slice(0, 4);
    expect(got.columns).toEqual([...kept.map((r) => [r]), []]);
    for (const row of got.rows) {
      const rowWhere = is('priority', row.key[0]);
      for (const [j, team] of kept.entries())
        expectClose(row.cells[j], await byHand(`${rowWhere} AND ${is('team', team)}`), `${row.key} x ${team}`);
      expectClose(row.cells[4], await byHand(`${rowWhere} AND ${noneOf('team', kept)}`), `${row.key} x Other`);
      expectClose(row.total, await byHand(rowWhere), `${row.key} total`);
    }
    expectClose(got.columnTotals[4], await byHand(noneOf('team', kept)), 'Total x Other');
    expectClose(got.grandTotal, await byHand('true'), 'grand total');
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { parseTable } from './support/html-table';
import { expectClose, seededRandom, useIndexedRecords } from './support/indexed-records';
import type { OtherTable, Values } from './support/ticket-records';

/*
 * The Other row and column with totals that add up (counts, sums, averages, minima, maxima, distinct
 * counts), which the pivot reads in the same scan as the column's (row's) totals, against SQL written
 * here and run by DuckDB on the same records; and real keys whose text is exactly "Other (N)", which
 * CSV and HTML must tell apart from the Other row and column (JSON marks the Other row itself).
 */

// Seven teams, one of them named as the Other row of the top four will be labelled ("Other (3)"), and
// the largest; five regions, one named as the Other column of the top three ("Other (2)").
const TEAMS = ['Other (3)', 'Ada', 'Bea', 'Cy', 'Dee', 'Eve', 'Fay'];
const REGIONS = ['Other (2)', 'North', 'South', 'East', 'West'];
const PRIORITIES = ['High', 'Low'];
const RECORDS = 2400;

function records(): Array<Record<string, unknown>> {
  const next = seededRandom(11);
  return Array.from({ length: RECORDS }, (_, i) => ({
    id: i,
    team: TEAMS[Math.floor(next() ** 2 * TEAMS.length)],
    region: REGIONS[Math.floor(next() ** 2 * REGIONS.length)],
    priority: PRIORITIES[i % 2],
    hours: i % 13 === 0 ? null : Math.round(next() * 10000) / 100,
    agent: `A${Math.floor(next() * 90)}`,
  }));
}

const TOTALS = [
  { name: 'N', aggregationType: 'Count' },
  { name: 'Hours', aggregationType: 'Sum', field: 'hours' },
  { name: 'Mean', aggregationType: 'Average', field: 'hours' },
  { name: 'Least', aggregationType: 'Min', field: 'hours' },
  { name: 'Most', aggregationType: 'Max', field: 'hours' },
  { name: 'Agents', aggregationType: 'CountDistinct', field: 'agent' },
];
const AGGREGATES = `count(*) AS a0, sum(hours) AS a1, avg(hours) AS a2, min(hours) AS a3, max(hours) AS a4,
  count(DISTINCT agent) AS a5`;
const valuesOf = (r: Record<string, unknown> | undefined): Values =>
  TOTALS.map((_, i) => (r?.[`a${i}`] === null || r?.[`a${i}`] === undefined ? null : Number(r[`a${i}`])));
describe('CROSSTAB.EXECUTE: Other rows and columns read beside the totals, and keys that read like them', () => {
  const { sql, crosstab } = useIndexedRecords({
    index: 'work',
    records,
    table: (file) => `CREATE TABLE t AS SELECT id, team, region, priority, CAST(hours AS DOUBLE) AS hours, agent
      FROM read_json('${file}')`,
  });
  const byCount = { by: 'value', measure: 0, direction: 'desc' };
  /** Values of `col` by count, largest first, ties by label: the order rowOrder by value gives. */
  const ranked = async (col: string) =>
    (await sql(`SELECT ${col} AS v, count(*) AS n FROM t GROUP BY 1 ORDER BY n DESC, lower(v), v`)).map((r) =>
      String(r.v),
    );
  const inList = (values: string[]) => `(${values.map((v) => `'${v}'`).join(', ')})`;
  const aggregate = async (where: string) => valuesOf((await sql(`SELECT ${AGGREGATES} FROM t WHERE ${where}`))[0]);

  it('otherRow over every column: its cells and total are its own records, every aggregation exact', async () => {
    const teams = await ranked('team');
    const kept = teams.slice(0, 4);
    expect(kept).toContain('Other (3)');
    const got = await crosstab<OtherTable>({
      format: 'json',
      rows: ['team'],
      columns: [{ field: 'region' }],
      totals: TOTALS,
      rowOrder: byCount,
      rowLimit: 4,
      otherRow: true,
    });
    expect(got.rows.map((r) => r.key)).toEqual([...kept.map((k) => [k]), []]);
    const other = got.rows[4];
    expect(other.other).toBe(3);
    // The real key "Other (3)" is a row like the others.
    expect(got.rows.find((r) => r.key[0] === 'Other (3)')?.other).toBeUndefined();
    const notKept = `team NOT IN ${inList(kept)}`;
    for (const [j, c] of got.columns.entries())
      expectClose(other.cells[j], await aggregate(`${notKept} AND region = '${String(c[0])}'`), `Other x ${c[0]}`);
    expectClose(other.total, await aggregate(notKept), 'Other total');
    for (const [j, c] of got.columns.entries())
      expectClose(got.columnTotals[j], await aggregate(`region = '${String(c[0])}'`), `Total x ${c[0]}`);
    expectClose(got.grandTotal, await aggregate('true'), 'grand total');
  });

  it('otherColumn over every row, with subtotals: the Other column of each row and subtotal is its own records', async () => {
    const regions = await ranked('region');
    const kept = regions.slice(0, 3);
    expect(kept).toContain('Other (2)');
    const got = await crosstab<OtherTable>({
      format: 'json',
      rows: ['team', 'priority'],
      columns: [{ field: 'region' }],
      totals: TOTALS,
      columnOrder: byCount,
      columnLimit: 3,
      otherColumn: true,
      subtotals: true,
    });
    expect(got.columns).toEqual([...kept.map((k) => [k]), []]);
    expect(got.otherColumn).toBe(2);
    const notKept = `region NOT IN ${inList(kept)}`;
    for (const row of got.rows) {
      const where = row.key.map((v, i) => `${i === 0 ? 'team' : 'priority'} = '${String(v)}'`).join(' AND ');
      expectClose(row.cells[3], await aggregate(`${where} AND ${notKept}`), `${JSON.stringify(row.key)} x Other`);
      expectClose(row.total, await aggregate(where), `${JSON.stringify(row.key)} total`);
    }
    expectClose(got.columnTotals[3], await aggregate(notKept), 'Total x Other');
  });

  it('a real key reading "Other (N)" is told apart in CSV and HTML: the Other label says what it stands for and HTML marks it', async () => {
    const teams = await ranked('team');
    const regions = await ranked('region');
    const params = {
      rows: ['team'],
      columns: [{ field: 'region' }],
      totals: [TOTALS[0]],
      rowOrder: byCount,
      columnOrder: byCount,
      rowLimit: 4,
      columnLimit: 3,
      otherRow: true,
      otherColumn: true,
    };
    const got = await crosstab<OtherTable>({ ...params, format: 'json' });
    const notTeams = `team NOT IN ${inList(teams.slice(0, 4))}`;
    const notRegions = `region NOT IN ${inList(regions.slice(0, 3))}`;
    const corner = (await aggregate(`${notTeams} AND ${notRegions}`))[0];
    expect(got.rows[4].cells[3][0]).toBe(corner);

    const csv = parseCsv(await crosstab<string>({ ...params, format: 'csv' })) as string[][];
    expect(csv.map((l) => l[0])).toEqual(['team', ...teams.slice(0, 4), 'Other (3 values)', 'Total']);
    expect(csv[0]).toEqual([
      'team',
      ...regions.slice(0, 3).map((r) => `${r} | N`),
      'Other (2 values) | N',
      'Total | N',
    ]);
    const realRow = csv.find((l) => l[0] === 'Other (3)')!;
    const realCount = (await aggregate(`team = 'Other (3)'`))[0];
    expect(Number(realRow[realRow.length - 1])).toBe(realCount);
    const otherLine = csv.find((l) => l[0] === 'Other (3 values)')!;
    expect(Number(otherLine[4])).toBe(corner);
    expect(Number(otherLine[otherLine.length - 1])).toBe((await aggregate(notTeams))[0]);

    const html = await crosstab<string>({ ...params, format: 'html' });
    const table = parseTable(html);
    expect(table.body.map((r) => r[0])).toEqual([...teams.slice(0, 4), 'Other (3 values)']);
    expect(table.head[0]).toEqual(['team', ...regions.slice(0, 3), 'Other (2 values)', 'Total']);
    // The Other headers carry a class and how many values they stand for; the real keys do not.
    expect(html).toContain(
      '<tr class="quarry-other"><th scope="row" class="quarry-other" data-other="3">Other (3 values)</th>',
    );
    expect(html).toContain('class="quarry-other" data-other="2">Other (2 values)</th>');
    expect(html).toContain('<th scope="row">Other (3)</th>');
    expect(html).toMatch(/<th scope="col" colspan="1">Other \(2\)<\/th>/);
    expect(html.match(/data-other=/g)).toHaveLength(2);
    // QUARRY_KEEP_DIR=<dir> keeps what a person sees, to look at.
    const keep = process.env.QUARRY_KEEP_DIR;
    if (keep) fs.writeFileSync(path.join(keep, 'other-labels.html'), html);
  });

  it('without a colliding key the Other label stays "Other (N)"', async () => {
    const got = await crosstab<string>({
      format: 'csv',
      rows: ['team'],
      totals: [TOTALS[0]],
      query: `team:(${TEAMS.slice(1).join(' OR ')})`,
      rowOrder: byCount,
      rowLimit: 2,
      otherRow: true,
    });
    const lines = parseCsv(got) as string[][];
    const teams = (await ranked('team')).filter((t) => t !== 'Other (3)');
    expect(lines.map((l) => l[0])).toEqual(['team', ...teams.slice(0, 2), `Other (${teams.length - 2})`, 'Total']);
  });
});

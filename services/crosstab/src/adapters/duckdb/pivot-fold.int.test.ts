import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import type { AxisValue, GroupRow } from '../../domain/axis-value';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';

/*
 * A folded pass (restrict.fold) against DuckDB by hand: every group it returns, the Other row's and
 * column's included, is the same aggregate written in SQL over the records the group stands for, for
 * every aggregation (medians, percentiles, standard deviations, distinct counts), with blank keys kept
 * and not kept, subtotals, and a query.
 */

const TEAMS = ['ant', 'bee', 'cat', 'dog', 'elk', 'fox', '', null];
const REGIONS = ['north', 'south', 'east', 'west', null];
const N = 4000;

const TOTALS: SentCrosstab['totals'] = [
  { aggregationType: 'Count' },
  { aggregationType: 'Median', field: 'hours' },
  { aggregationType: 'Percentile', field: 'hours', percentile: 90 },
  { aggregationType: 'StdDev', field: 'hours' },
  { aggregationType: 'CountDistinct', field: 'agent' },
  { aggregationType: 'Sum', field: 'hours' },
  { aggregationType: 'Average', field: 'hours' },
  { aggregationType: 'Min', field: 'hours' },
  { aggregationType: 'Max', field: 'hours' },
];
const BY_HAND = `count(*), quantile_cont(hours, 0.5), quantile_cont(hours, 0.9), stddev_samp(hours),
  count(DISTINCT nullif(agent, '')), sum(hours), avg(hours), min(hours), max(hours)`;

describe('a folded pass (the Other row and column read in the kept keys pass)', () => {
  let dir: string;
  let entry: IndexEntry;
  let engine: SnapshotEngine;
  let hand: DuckDBConnection;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-fold-'));
    const source = path.join(dir, 'tickets.parquet');
    const db = await DuckDBInstance.create(':memory:');
    hand = await db.connect();
    const teams = `[${TEAMS.map((t) => (t === null ? 'NULL' : `'${t}'`)).join(', ')}]`;
    const regions = `[${REGIONS.map((r) => (r === null ? 'NULL' : `'${r}'`)).join(', ')}]`;
    // Keys spread by a hash, values unevenly (squares modulo a prime): no two groups share a median by chance.
    await hand.run(`CREATE TABLE t AS SELECT
        ${teams}[1 + CAST(hash(i) % ${TEAMS.length} AS BIGINT)] AS team,
        ['p1', 'p2', 'p3'][1 + (i * 7) % 3] AS priority,
        ${regions}[1 + CAST(hash(i * 3 + 1) % ${REGIONS.length} AS BIGINT)] AS region,
        CASE WHEN i % 17 = 0 THEN NULL ELSE CAST((i * i) % 101 AS DOUBLE) / 4 + i % 3 END AS hours,
        CASE WHEN i % 11 = 0 THEN '' ELSE 'a' || ((i * 31) % 57) END AS agent,
        'q' || (i % 2) AS queue
      FROM range(${N}) r(i)`);
    await hand.run(`COPY t TO '${source}' (FORMAT parquet)`);
    entry = await builtEntry({ name: 'tickets', file: source, dataDir: dir, types: {}, views: [] });
    engine = new SnapshotEngine(dir, { threads: 2 });
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    hand?.closeSync();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const lit = (v: AxisValue) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
  /** The records of one key on a column: a blank key is null or empty text. */
  const isKey = (col: string, v: AxisValue) => (v === null ? `nullif(${col}, '') IS NULL` : `${col} = ${lit(v)}`);
  /** The records whose key on `col` is none of `kept` (a blank one only when null is not kept). */
  const notKept = (col: string, kept: AxisValue[]) =>
    `NOT coalesce(${kept.map((v) => isKey(col, v)).join(' OR ') || 'false'}, false)`;

  async function byHand(where: string): Promise<Array<number | null>> {
    const [row] = (await hand.runAndReadAll(`SELECT ${BY_HAND} FROM t WHERE ${where}`)).getRows();
    return row.map((v) => (v === null ? null : Number(v)));
  }

  function expectSame(got: Array<number | null>, want: Array<number | null>, what: string) {
    got.forEach((v, i) => {
      const w = want[i];
      if (v === null || w === null) expect({ what, i, v }).toEqual({ what, i, v: w });
      else if (Math.abs(v - w) > 1e-9 * Math.max(1, Math.abs(w))) throw new Error(`${what} total ${i}: ${v} vs ${w}`);
    });
  }

  async function folded(
    sent: SentCrosstab,
    kept: { rows?: AxisValue[]; columns?: AxisValue[] },
    query = '*',
  ): Promise<GroupRow[]> {
    const spec = crosstabSpec(entry, crosstabInput(sent));
    const where = parseQuery(query, { fields: entry.fields as FieldDef[], now: Date.now() });
    const got = await new DuckDbPivotEngine(engine).pivot(entry, where, spec, MAX_CELLS, undefined, {
      ...kept,
      fold: true,
    });
    expect(got.folded).toBe(true);
    return got.groups;
  }

  /** Each group against the same aggregates by hand over the records it stands for. */
  async function check(
    groups: GroupRow[],
    axes: { rows: string[]; columns: string[] },
    kept: { rows?: AxisValue[]; columns?: AxisValue[] },
    filter = 'true',
  ) {
    for (const g of groups) {
      const tests = [filter];
      if (g.rowOther) tests.push(notKept(axes.rows[0], kept.rows ?? []));
      else g.rowKey.forEach((v, i) => tests.push(isKey(axes.rows[i], v)));
      if (g.columnOther) tests.push(notKept(axes.columns[0], kept.columns ?? []));
      else g.columnKey.forEach((v, i) => tests.push(isKey(axes.columns[i], v)));
      const what = `${g.rowOther ? 'Other' : JSON.stringify(g.rowKey)} x ${g.columnOther ? 'Other' : JSON.stringify(g.columnKey)}`;
      expectSame(g.values, await byHand(tests.join(' AND ')), what);
    }
  }

  it('rows and columns limited, subtotals, blank keys kept: every group and both Others are exact', async () => {
    const kept = { rows: ['bee', null, 'dog'], columns: ['south', 'north'] };
    const axes = { rows: ['team', 'priority'], columns: ['region'] };
    const groups = await folded(
      {
        rows: axes.rows,
        columns: axes.columns.map((field) => ({ field })),
        totals: TOTALS,
        subtotals: true,
        columnLimit: 2,
        rowLimit: 3,
      },
      kept,
    );
    await check(groups, axes, kept);
    const otherRow = groups.filter((g) => g.rowOther);
    const otherColumn = groups.filter((g) => g.columnOther);
    // The Other row: a cell per kept column, the Other column (the corner), its total; nothing deeper.
    expect(otherRow.map((g) => (g.columnOther ? 'other' : JSON.stringify(g.columnKey))).sort()).toEqual(
      ['[]', '["north"]', '["south"]', 'other'].sort(),
    );
    // The Other column: a cell per kept row, per kept team's subtotal, the Other row, and its total.
    expect(otherColumn.filter((g) => !g.rowOther && g.rowKey.length === 2)).toHaveLength(9);
    expect(otherColumn.filter((g) => !g.rowOther && g.rowKey.length === 1)).toHaveLength(3);
    expect(otherColumn.filter((g) => !g.rowOther && g.rowKey.length === 0)).toHaveLength(1);
    // Kept rows' totals across every column and kept columns' totals down every row are there.
    expect(groups.filter((g) => !g.rowOther && !g.columnOther && g.columnKey.length === 0)).toHaveLength(9 + 3 + 1);
    expect(groups.filter((g) => !g.rowOther && !g.columnOther && g.rowKey.length === 0)).toHaveLength(2 + 1);
    // No group of a key not kept.
    for (const g of groups) {
      if (!g.rowOther && g.rowKey.length) expect(kept.rows).toContain(g.rowKey[0]);
      if (!g.columnOther && g.columnKey.length) expect(kept.columns).toContain(g.columnKey[0]);
    }
  });

  it('rows limited alone, blank key not kept, under a query: the Other row across every column', async () => {
    const kept = { rows: ['ant', 'cat', 'fox'] };
    const axes = { rows: ['team'], columns: ['region'] };
    const groups = await folded(
      { rows: axes.rows, columns: axes.columns.map((field) => ({ field })), totals: TOTALS, rowLimit: 3 },
      kept,
      'queue:q1',
    );
    await check(groups, axes, kept, `queue = 'q1'`);
    // The Other row has the blank team's records: a cell for each region, blank region included, and its total.
    expect(groups.filter((g) => g.rowOther)).toHaveLength(REGIONS.length + 1);
    expect(groups.some((g) => g.columnOther)).toBe(false);
  });

  it('no kept key at all: every record is the Other row', async () => {
    const axes = { rows: ['team'], columns: ['priority'] };
    const groups = await folded(
      { rows: axes.rows, columns: axes.columns.map((field) => ({ field })), totals: TOTALS, rowLimit: 1 },
      { rows: [] },
    );
    await check(groups, axes, { rows: [] });
    const grand = groups.find((g) => g.rowKey.length === 0 && g.columnKey.length === 0 && !g.rowOther);
    const other = groups.find((g) => g.rowOther && g.columnKey.length === 0);
    expect(other?.values).toEqual(grand?.values);
  });

  it('cheap totals decline the fold (their Other cells come as twins of the other passes)', async () => {
    const spec = crosstabSpec(
      entry,
      crosstabInput({
        rows: ['team'],
        columns: [{ field: 'region' }],
        totals: [{ aggregationType: 'Count' }],
        rowLimit: 2,
      }),
    );
    const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
    const got = await new DuckDbPivotEngine(engine).pivot(entry, where, spec, MAX_CELLS, undefined, {
      rows: ['ant', 'bee'],
      fold: true,
    });
    expect(got.folded).toBeUndefined();
    expect(
      got.groups.every((g) => !g.rowOther && (g.rowKey.length === 0 || ['ant', 'bee'].includes(g.rowKey[0] as string))),
    ).toBe(true);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexCatalog, IndexEntry, RollupDef } from '@quarry/metadata-store';
import type { Reader } from '@quarry/query-language';
import type { ResultCache } from '@quarry/result-cache';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { eventsWithRollups, sameJson } from '../../../test-support/rollup-events';
import { RunCrosstabUseCase } from '../../domain/run-crosstab.use-case';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';

/*
 * A distinct count answered from a rollup rolls up in JS from the values each cell lists: the same
 * table as DuckDB's grouping sets over the same rollup (the engine with the JS roll-up off) and as the
 * scan of the records, at every level (cells, subtotals, totals), with blank and null values, values
 * differing only in case, and a value holding the separator the cells' lists are joined with.
 */

const noCache: ResultCache = { enabled: false, get: () => undefined, set: () => undefined };

describe('distinct counts from a rollup, rolled up in JS', () => {
  let dir: string;
  let engine: SnapshotEngine;
  let events: IndexEntry;

  const run = (entry: IndexEntry, sent: SentCrosstab, pivots = new DuckDbPivotEngine(engine)) => {
    const catalog = { getIndex: async () => entry } as unknown as IndexCatalog;
    const reader: Reader = { admin: false, indexes: ['*'], realms: [] };
    return new RunCrosstabUseCase(catalog, pivots, noCache).run(
      reader,
      crosstabInput({ index: entry.name, ...sent }),
      'json',
    );
  };

  /** The SQL each run sends, and its table from the JS roll-up, from DuckDB's, and from the scan. */
  async function threeWays(entry: IndexEntry, sent: SentCrosstab) {
    const read: string[] = [];
    const all = jest.spyOn(engine, 'all').mockImplementation(function (this: SnapshotEngine, sql, ...rest) {
      read.push(sql);
      return SnapshotEngine.prototype.all.call(this, sql, ...rest);
    });
    try {
      const js = await run(entry, sent);
      const jsSql = [...read];
      read.length = 0;
      const inSql = await run(entry, sent, new DuckDbPivotEngine(engine, 0));
      const sqlSql = [...read];
      const scan = await run({ ...entry, rollups: [] }, sent);
      return { js, jsSql, inSql, sqlSql, scan };
    } finally {
      all.mockRestore();
    }
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-rollup-distinct-'));
    engine = new SnapshotEngine(dir);
    events = await eventsWithRollups(dir);
  }, 120_000);

  afterAll(async () => {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const shapes: Array<[string, SentCrosstab]> = [
    [
      'two row levels by month, subtotals, with other totals',
      {
        rows: ['kind', 'region'],
        columns: [{ field: 'at', dateGroup: 'month' }],
        totals: [
          { aggregationType: 'CountDistinct', field: 'code' },
          { aggregationType: 'Sum', field: 'amount' },
          { aggregationType: 'Count' },
        ],
        subtotals: true,
        format: 'json',
      },
    ],
    [
      'by year, filtered, shown as a share of the row',
      {
        rows: ['region'],
        columns: [{ field: 'at', dateGroup: 'year' }],
        totals: [{ aggregationType: 'CountDistinct', field: 'code', showAs: 'percentOfRowTotal' }],
        query: 'kind:alpha OR code:ord',
        format: 'json',
      } as SentCrosstab,
    ],
    [
      'rows only, top 2 by the distinct count',
      {
        rows: ['kind'],
        totals: [{ aggregationType: 'CountDistinct', field: 'code' }],
        rowLimit: 2,
        rowOrder: { by: 'value', measure: 0, direction: 'desc' },
        format: 'json',
      } as SentCrosstab,
    ],
    [
      'nothing matches',
      {
        rows: ['kind'],
        columns: [{ field: 'at', dateGroup: 'quarter' }],
        totals: [{ aggregationType: 'CountDistinct', field: 'code' }],
        query: 'code:nowhere',
        format: 'json',
      },
    ],
  ];

  it.each(shapes)('%s: the same table as the grouping sets and as the scan', async (_, sent) => {
    const { js, jsSql, inSql, sqlSql, scan } = await threeWays(events, sent);
    expect(js.servedBy).toBe('by_kind_region_month');
    expect(inSql.servedBy).toBe('by_kind_region_month');
    // The JS path lists each cell's values; the engine with the JS roll-up off counts in grouping sets.
    expect(jsSql.some((sql) => sql.includes('string_agg('))).toBe(true);
    expect(jsSql.some((sql) => sql.includes('GROUPING SETS'))).toBe(false);
    expect(sqlSql.some((sql) => sql.includes('string_agg('))).toBe(false);
    sameJson(JSON.parse(String(js.payload)), JSON.parse(String(inSql.payload)), 'js vs grouping sets');
    sameJson(JSON.parse(String(js.payload)), JSON.parse(String(scan.payload)), 'js vs scan');
  });

  it('a value holding the separator sends the count to the grouping sets, with the same answer', async () => {
    const sep = '\u001f';
    const rows = Array.from({ length: 400 }, (_, i) => ({
      team: ['red', 'blue', 'green'][i % 3],
      at: `2024-0${1 + (i % 4)}-1${i % 10} 10:00:00`,
      // "a<sep>b" is one value; a list joined with the separator would read it as "a" and "b".
      who: [`a${sep}b`, 'a', 'b', `b${sep}a`, '', null][i % 6],
    }));
    const file = path.join(dir, 'teams.json');
    fs.writeFileSync(file, JSON.stringify(rows));
    const rollups: RollupDef[] = [
      {
        name: 'team_month',
        rows: ['team'],
        columns: [{ field: 'at', grain: 'month' }],
        totals: [{ kind: 'count' }, { kind: 'countDistinct', field: 'who' }],
      },
    ];
    const teams = {
      ...(await builtEntry({ name: 'teams', file, dataDir: dir, types: {}, views: [], rollups })),
      rollups,
    };
    const sent: SentCrosstab = {
      rows: ['team'],
      columns: [{ field: 'at', dateGroup: 'month' }],
      totals: [{ aggregationType: 'CountDistinct', field: 'who' }, { aggregationType: 'Count' }],
      subtotals: true,
      format: 'json',
    };
    const { js, jsSql, inSql, scan } = await threeWays(teams, sent);
    expect(js.servedBy).toBe('team_month');
    expect(jsSql.some((sql) => sql.includes('string_agg('))).toBe(true);
    expect(jsSql.some((sql) => sql.includes('GROUPING SETS'))).toBe(true);
    sameJson(JSON.parse(String(js.payload)), JSON.parse(String(inSql.payload)), 'fallback vs grouping sets');
    sameJson(JSON.parse(String(js.payload)), JSON.parse(String(scan.payload)), 'fallback vs scan');
    // The distinct non-blank values of all records, counted here: "a<sep>b", "a", "b", "b<sep>a".
    const distinct = new Set(rows.map((r) => r.who).filter((w) => w !== null && w !== ''));
    const table = JSON.parse(String(js.payload)) as { grandTotal: number[] };
    expect(table.grandTotal).toEqual([distinct.size, rows.length]);
    expect(distinct.size).toBe(4);
  });
  it('the cells read from a rollup are kept: the same crosstab again reads no statement and answers the same', async () => {
    const pivots = new DuckDbPivotEngine(engine);
    const read: string[] = [];
    const all = jest.spyOn(engine, 'all').mockImplementation(function (this: SnapshotEngine, sql, ...rest) {
      read.push(sql);
      return SnapshotEngine.prototype.all.call(this, sql, ...rest);
    });
    try {
      for (const [, sent] of shapes) {
        read.length = 0;
        const first = await run(events, sent, pivots);
        const firstReads = read.filter((sql) => sql.includes('string_agg(')).length;
        read.length = 0;
        const again = await run(events, sent, pivots);
        expect(firstReads).toBeGreaterThan(0);
        expect(read.filter((sql) => sql.includes('string_agg('))).toEqual([]);
        expect(again.servedBy).toBe('by_kind_region_month');
        sameJson(JSON.parse(String(again.payload)), JSON.parse(String(first.payload)), 'kept vs read');
        const scan = await run({ ...events, rollups: [] }, sent);
        sameJson(JSON.parse(String(again.payload)), JSON.parse(String(scan.payload)), 'kept vs scan');
      }
      // Another filter is another statement (its values are parameters): read, not taken from the kept cells.
      read.length = 0;
      const other = await run(events, { ...shapes[1][1], query: 'kind:beta' }, pivots);
      expect(read.filter((sql) => sql.includes('string_agg(')).length).toBe(1);
      const otherScan = await run({ ...events, rollups: [] }, { ...shapes[1][1], query: 'kind:beta' });
      sameJson(JSON.parse(String(other.payload)), JSON.parse(String(otherScan.payload)), 'other filter vs scan');
      // An index forgotten (dropped, reloaded) is read again.
      pivots.forget(events.name);
      read.length = 0;
      await run(events, shapes[0][1], pivots);
      expect(read.filter((sql) => sql.includes('string_agg(')).length).toBe(1);
    } finally {
      all.mockRestore();
    }
  });
});

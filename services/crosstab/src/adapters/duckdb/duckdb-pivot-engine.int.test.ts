import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { DuckDBInstance } from '@duckdb/node-api';
import { attachableFile, SnapshotEngine, type SnapshotEngineOptions } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import type { ModelTotal } from '../../../../../tests/support/pivot-model';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { crosstabInput } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';
import { pivotCompareConformance } from '../pivot/pivot-compare.conformance';
import { gapsIndex, pivotEngineConformance, RECORDS, VIEWS, type Rec } from '../pivot/pivot-engine.conformance';

pivotEngineConformance('DuckDbPivotEngine', async (dir) => {
  const engine = new SnapshotEngine(dir);
  return { pivots: new DuckDbPivotEngine(engine), close: () => engine.close() };
});

pivotCompareConformance('DuckDbPivotEngine', async (dir) => {
  const engine = new SnapshotEngine(dir);
  return { pivots: new DuckDbPivotEngine(engine), close: () => engine.close() };
});

describe('DuckDbPivotEngine: one-scan planner, its two roll-ups', () => {
  let dir: string;
  let engine: SnapshotEngine;
  let pivots: DuckDbPivotEngine;
  let entry: IndexEntry;

  beforeAll(async () => {
    ({ dir, entry } = await gapsIndex());
    engine = new SnapshotEngine(dir);
    pivots = new DuckDbPivotEngine(engine);
  }, 60000);

  afterAll(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('subtotals on deep axes: the JS roll-up and the DuckDB grouping sets give the same groups, each from records', async () => {
    const spec = {
      ...crosstabSpec(
        entry,
        crosstabInput({
          rows: ['region', 'city', 'code'],
          columns: [
            { field: 'day', reverse: false },
            { field: 'flag', reverse: false },
          ],
          totals: [
            { aggregationType: 'Sum', field: 'amount', dynamicView: '', name: 's' },
            { aggregationType: 'Average', field: 'qty', dynamicView: '', name: 'a' },
            { aggregationType: 'Count', field: '', dynamicView: '', name: 'n' },
          ],
          subtotals: true,
        }),
      ),
    };
    const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
    const inJs = await pivots.pivot(entry, where, spec, MAX_CELLS);
    const inSql = await new DuckDbPivotEngine(engine, 0).pivot(entry, where, spec, MAX_CELLS);
    const byKey = (groups: typeof inJs.groups) =>
      new Map(
        groups.map((g) => [
          JSON.stringify([g.rowKey, g.columnKey]),
          g.values.map((v) => (v === null ? null : Number(v.toPrecision(10)))),
        ]),
      );
    expect(inJs.keys).toEqual(inSql.keys);
    expect(byKey(inJs.groups)).toEqual(byKey(inSql.groups));
    // Every level the spec asks for is there: 4 row depths x 3 column depths.
    const depths = new Set(inJs.groups.map((g) => `${g.rowKey.length}:${g.columnKey.length}`));
    expect(depths.size).toBe(12);
    // A subtotal's count is its records' count.
    const north = inJs.groups.find((g) => g.rowKey.length === 1 && g.rowKey[0] === 'North' && g.columnKey.length === 0);
    expect(north?.values[2]).toBe(RECORDS.filter((r) => r.region === 'North').length);
  });

  const input = (c: { rows: string[]; columns: Array<{ field: string }>; totals: ModelTotal[] }) =>
    crosstabInput({
      rows: c.rows,
      columns: c.columns.map((x) => ({ field: x.field, reverse: false })),
      totals: c.totals.map((t) => {
        const view = t.distinct ? VIEWS.find((v) => v.field === t.distinct)?.name : undefined;
        return { aggregationType: t.agg, field: view ? '' : (t.field ?? ''), dynamicView: view ?? '', name: t.name };
      }),
    });

  describe('over the cell limit: the key counts come back, no group, and no more cells than the limit allows', () => {
    const where = () => parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
    const rowsFromDuckDb = async (spec: ReturnType<typeof crosstabSpec>, maxCells: number) => {
      const all = jest.spyOn(engine, 'all');
      try {
        const result = await pivots.pivot(entry, where(), spec, maxCells);
        const returned = await Promise.all(all.mock.results.map((r) => r.value as Promise<unknown[]>));
        return { result, returned: returned.map((r) => r.length) };
      } finally {
        all.mockRestore();
      }
    };

    it.each([
      ['records only (cells pre-aggregated, totals summed in JS)', [{ agg: 'Count' as const, name: 'n' }]],
      ['a dynamic view (roll-up in DuckDB)', [{ agg: 'Count' as const, distinct: 'code', name: 'c' }]],
    ])('%s', async (_, totals) => {
      const spec = crosstabSpec(entry, input({ rows: ['region', 'city'], columns: [{ field: 'day' }], totals }));
      const full = await pivots.pivot(entry, where(), spec, MAX_CELLS);
      const cells = full.keys.rows * full.keys.columns;
      expect(full.groups.length).toBeGreaterThan(cells / 2);
      // Just over: the cells fit under the bound but the keys' product does not.
      const just = await rowsFromDuckDb(spec, cells - 1);
      expect(just.result).toMatchObject({ keys: full.keys, groups: [] });
      expect(just.result.tooManyGroups).toBeUndefined();
      expect(Math.max(...just.returned)).toBeLessThanOrEqual(cells - 1);
      // Far over: DuckDB itself stopped at the counts (one row) after at most a bounded number of cells.
      const far = await rowsFromDuckDb(spec, 10);
      expect(far.result).toMatchObject({ keys: full.keys, groups: [] });
      expect(far.returned[far.returned.length - 1]).toBe(1);
      expect(Math.max(...far.returned)).toBeLessThanOrEqual(11);
      // Exactly at the limit is allowed.
      expect((await pivots.pivot(entry, where(), spec, cells)).groups).toHaveLength(full.groups.length);
    });
  });
});

/**
 * Sum(v) by r x c over `records`, pivoted both ways: summed in JS (the default) and rolled up in DuckDB,
 * in a fresh data dir.
 */
async function sumByRowAndColumn(label: string, records: Rec[], maxCells: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `q-pivot-${label}-`));
  const engine = new SnapshotEngine(dir);
  try {
    const file = path.join(dir, `${label}.json`);
    fs.writeFileSync(file, JSON.stringify(records));
    const entry = await builtEntry({ name: label, file, dataDir: dir, types: {}, grains: {}, views: [] });
    const spec = crosstabSpec(
      entry,
      crosstabInput({
        rows: ['r'],
        columns: [{ field: 'c', reverse: false }],
        totals: [{ aggregationType: 'Sum', field: 'v', dynamicView: '', name: 's' }],
      }),
    );
    const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
    return {
      inJs: await new DuckDbPivotEngine(engine).pivot(entry, where, spec, maxCells),
      inSql: await new DuckDbPivotEngine(engine, 0).pivot(entry, where, spec, maxCells),
    };
  } finally {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('DuckDbPivotEngine: integer totals past 2^53', () => {
  it('sums exactly in the JS roll-up as in DuckDB, where the cells fit a double and the totals do not', async () => {
    // Six cells of 2^52 + 1 each, exact as doubles; their column and grand totals pass 2^53, where a
    // sum of doubles rounds (in any order, the values being equal) and a sum of integers does not.
    const records = Array.from({ length: 6 }, (_, i) => ({ r: `r${i}`, c: 'c0', v: 2 ** 52 + 1 }));
    const { inJs, inSql } = await sumByRowAndColumn('big', records, MAX_CELLS);
    const exact = (keep: (x: (typeof records)[number]) => boolean) =>
      Number(records.filter(keep).reduce((s, x) => s + BigInt(x.v), 0n));
    const value = (groups: typeof inJs.groups, rowKey: string[], columnKey: string[]) =>
      groups.find((g) => JSON.stringify([g.rowKey, g.columnKey]) === JSON.stringify([rowKey, columnKey]))?.values[0];
    for (const groups of [inJs.groups, inSql.groups]) {
      expect(value(groups, [], [])).toBe(exact(() => true));
      expect(value(groups, ['r1'], [])).toBe(exact((x) => x.r === 'r1'));
      expect(value(groups, [], ['c0'])).toBe(exact((x) => x.c === 'c0'));
    }
    // A double sum of the same values is not exact: the test can tell the difference.
    expect(records.reduce((s, x) => s + x.v, 0)).not.toBe(exact(() => true));
  });
});

describe('DuckDbPivotEngine: a sparse pivot (few cells over many row and column keys)', () => {
  it('rolls up in JS as in DuckDB when the key space is too large for the flat group index', async () => {
    // 3,000 row keys x 2,000 column keys x 4 levels: 24M slots, over the flat index's 4M; 3,000 cells.
    const records = Array.from({ length: 3000 }, (_, i) => ({ r: `r${i}`, c: `c${i % 2000}`, v: i }));
    // A cell limit above the 6M drawn cells, so the groups come back to be compared.
    const { inJs, inSql } = await sumByRowAndColumn('sparse', records, 10_000_000);
    const byKey = (groups: typeof inJs.groups) =>
      new Map(groups.map((g) => [JSON.stringify([g.rowKey, g.columnKey]), g.values[0]]));
    expect(inJs.keys).toEqual({ rows: 3000, columns: 2000 });
    expect(inJs.groups).toHaveLength(3000 + 3000 + 2000 + 1);
    expect(byKey(inJs.groups)).toEqual(byKey(inSql.groups));
    expect(byKey(inJs.groups).get(JSON.stringify([[], ['c7']]))).toBe(7 + 2007);
  });
});

/**
 * Drops an attached version's sample: as written before the sample existed, its facts name
 * none; or, unreadable, its facts still name the table that is gone.
 */
async function withoutTheSample(parquetFile: string, as: 'before the sample' | 'sample unreadable'): Promise<void> {
  const db = await DuckDBInstance.create(attachableFile(parquetFile));
  const c = await db.connect();
  try {
    if (as === 'before the sample') {
      const [row] = (await c.runAndReadAll('SELECT facts FROM quarry_facts')).getRowObjectsJS();
      const facts = JSON.parse(String(row.facts)) as Record<string, unknown>;
      delete facts.sample;
      await c.run(`UPDATE quarry_facts SET facts = '${JSON.stringify(facts).replace(/'/g, "''")}'`);
    }
    // Written as a view over its records (single-word fields' words computed on reading).
    await c.run('DROP VIEW quarry_sample');
    await c.run('DROP TABLE quarry_sample_records');
    await c.run('CHECKPOINT');
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** A fresh data folder and snapshot engine for one test; both go when it ends. */
async function withEngine(
  label: string,
  options: SnapshotEngineOptions,
  test: (dir: string, engine: SnapshotEngine) => Promise<void>,
): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), label));
  const engine = new SnapshotEngine(dir, options);
  try {
    await test(dir, engine);
  } finally {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('DuckDbPivotEngine.keysAtLeast on an attached version', () => {
  it('counts a date axis at its grain from the load, where a sample of blocks misses rare days', async () => {
    await withEngine('q-pivot-keys-', {}, async (dir, engine) => {
      // 150,000 records on one day, but for 50 records spread one per 3,000 with a day of their own:
      // a system sample of 100,000 records (whole blocks) sees about two thirds of those days.
      const records = Array.from({ length: 150_000 }, (_, i) => ({
        on:
          i % 3000 === 1500
            ? new Date(Date.UTC(2024, 0, 1) + ((i - 1500) / 3000) * 86_400_000).toISOString().slice(0, 10)
            : '2023-06-01',
        n: i % 7,
      }));
      const days = new Set(records.map((r) => r.on));
      const file = path.join(dir, 'days.json');
      fs.writeFileSync(file, JSON.stringify(records));
      const entry = await builtEntry({ name: 'days', file, dataDir: dir, types: {}, views: [], attachMinRecords: 0 });
      const spec = crosstabSpec(
        entry,
        crosstabInput({ rows: ['on'], totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: 'n' }] }),
      );
      const all = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
      expect((await new DuckDbPivotEngine(engine).keysAtLeast(entry, all, spec)).rows).toBe(days.size);
      // Filtered, only the sample can speak: a lower bound, never more than the keys there are.
      const some = parseQuery('n:[0 TO 3]', { fields: entry.fields as FieldDef[], now: Date.now() });
      const least = await new DuckDbPivotEngine(engine).keysAtLeast(entry, some, spec);
      expect(least.rows).toBeGreaterThan(0);
      expect(least.rows).toBeLessThan(days.size);
    });
  }, 60_000);

  /** What DuckDB's buffer holds of attached tables' pages. */
  const bufferedBytes = async (e: SnapshotEngine) =>
    Number((await e.all(`SELECT memory_usage_bytes AS n FROM duckdb_memory() WHERE tag = 'BASE_TABLE'`))[0].n);

  /** 300,000 records at 3,000 stations, one in 40 of them "hot"; attached, with or without the stored sample. */
  async function hotStations(
    dir: string,
    engine: SnapshotEngine,
    format: 'stored sample' | 'before the sample' | 'sample unreadable',
  ) {
    const records = Array.from({ length: 300_000 }, (_, i) => ({
      station: `S${Math.floor(i / 100) % 3000}`,
      hot: i % 40 === 0 ? 'yes' : 'no',
      // Text of several words, its words column stored: pages enough that which ones are read shows.
      note: `record ${i} at station ${Math.floor(i / 100) % 3000}`,
    }));
    const file = path.join(dir, 'hot.json');
    fs.writeFileSync(file, JSON.stringify(records));
    const entry = await builtEntry({ name: 'hot', file, dataDir: dir, types: {}, views: [], attachMinRecords: 0 });
    if (format !== 'stored sample') await withoutTheSample(path.join(dir, entry.snapshot), format);
    const spec = crosstabSpec(
      entry,
      crosstabInput({
        rows: ['station'],
        totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: '' }],
      }),
    );
    const fields = entry.fields as FieldDef[];
    const query = (q: string) => parseQuery(q, { fields, now: Date.now() });
    return { entry, spec, query, pivots: new DuckDbPivotEngine(engine) };
  }

  // A filter that keeps 2.5 % of the records leaves the first sample few of them, and it
  // says so; the thorough sample (here larger than the index: every record) sees every key, and no more.
  // Versions written before the stored sample existed are sampled from their records, with the same answers.
  it.each(['stored sample', 'before the sample'] as const)(
    'says a selective filter left the sample few records, and a thorough sample sees more keys (%s)',
    async (format) => {
      await withEngine('q-pivot-thorough-', {}, async (dir, engine) => {
        const { entry, spec, query, pivots } = await hotStations(dir, engine, format);
        expect((await engine.table(entry)).sample !== undefined).toBe(format === 'stored sample');
        const all = await pivots.keysAtLeast(entry, query('*'), spec);
        expect(all).toMatchObject({ rows: 3000, moreToSee: false });
        const first = await pivots.keysAtLeast(entry, query('hot:yes'), spec);
        expect(first.moreToSee).toBe(true);
        expect(first.rows).toBeLessThan(3000);
        const thorough = await pivots.keysAtLeast(entry, query('hot:yes'), spec, undefined, { thorough: true });
        expect(thorough).toMatchObject({ rows: 3000, outerRows: 3000, moreToSee: false });
        // An OR filter keeps exactly its own keys on the sample, no more.
        const either = await pivots.keysAtLeast(entry, query('hot:yes OR station:S1'), spec, undefined, {
          thorough: true,
        });
        expect(either.rows).toBe(3000);
        const none = await pivots.keysAtLeast(entry, query('station:S1 OR station:S2'), spec, undefined, {
          thorough: true,
        });
        expect(none.rows).toBe(2);
      });
    },
    60_000,
  );

  it('counts blank text and null as one key, as the pivot groups them, and never more keys than there are', async () => {
    await withEngine('q-pivot-blank-keys-', {}, async (dir, engine) => {
      const kinds = ['A', 'B', '', null];
      const records = Array.from({ length: 150_000 }, (_, i) => ({ station: kinds[i % 4], n: i }));
      const file = path.join(dir, 'blank.json');
      fs.writeFileSync(file, JSON.stringify(records));
      const entry = await builtEntry({ name: 'blank', file, dataDir: dir, types: {}, views: [], attachMinRecords: 0 });
      const spec = crosstabSpec(
        entry,
        crosstabInput({
          rows: ['station'],
          totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: '' }],
        }),
      );
      // A filter, so only the sample speaks (not the load's counts).
      const where = parseQuery('n:[0 TO 1000000]', { fields: entry.fields as FieldDef[], now: Date.now() });
      const pivots = new DuckDbPivotEngine(engine);
      const pivot = await pivots.pivot(entry, where, spec, MAX_CELLS);
      expect(pivot.keys.rows).toBe(3);
      for (const thorough of [false, true])
        expect((await pivots.keysAtLeast(entry, where, spec, undefined, { thorough })).rows).toBe(3);
    });
  }, 60_000);

  // The first level is written first and carries its level: reading it skips the rest of the sample's pages.
  it('reads only the first level’s pages for a first estimate, the whole sample for a thorough one', async () => {
    await withEngine('q-pivot-levels-', {}, async (dir, engine) => {
      const { entry, spec, query } = await hotStations(dir, engine, 'stored sample');
      const table = await engine.table(entry);
      expect(table.sample?.first).toBeLessThan(table.sample!.records / 2);
      const pivots = new DuckDbPivotEngine(engine);
      const atOpen = await bufferedBytes(engine);
      await pivots.keysAtLeast(entry, query('hot:yes'), spec);
      const first = (await bufferedBytes(engine)) - atOpen;
      await pivots.keysAtLeast(entry, query('hot:yes'), spec, undefined, { thorough: true });
      const whole = (await bufferedBytes(engine)) - atOpen;
      // 100,000 of 300,000 sampled records: about a third of the pages.
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThan(whole * 0.6);
    });
  }, 60_000);

  it('serves a version whose sample cannot be read, its estimate sampling the records', async () => {
    await withEngine('q-pivot-no-sample-', { warmSamples: true }, async (dir, engine) => {
      const { entry, spec, query, pivots } = await hotStations(dir, engine, 'sample unreadable');
      const table = await engine.table(entry);
      expect(table.sample).toBeUndefined();
      const [row] = await engine.all(`SELECT count(*) AS n FROM "${table.table}" WHERE station = 'S7'`);
      expect(Number(row.n)).toBe(100);
      const thorough = await pivots.keysAtLeast(entry, query('hot:yes'), spec, undefined, { thorough: true });
      expect(thorough.rows).toBe(3000);
    });
  }, 60_000);

  // What makes the estimate's time independent of the index size: in a crosstab process the sample's pages
  // are read when the version opens, and the estimate then reads no page of the records, filtered or not.
  it('reads the stored sample read in at open, and no page of the records', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-pivot-warm-sample-'));
    const warm = new SnapshotEngine(dir, { warmSamples: true });
    const cold = new SnapshotEngine(dir);
    const buffered = bufferedBytes;
    try {
      const { entry, spec, query } = await hotStations(dir, warm, 'stored sample');
      await cold.table(entry);
      await warm.table(entry);
      // Opened, the crosstab process holds the sample's pages; the other only what opening read.
      const atOpen = await buffered(warm);
      expect(atOpen).toBeGreaterThan((await buffered(cold)) + 1024 * 1024);
      const pivots = new DuckDbPivotEngine(warm);
      await pivots.keysAtLeast(entry, query('hot:yes'), spec);
      await pivots.keysAtLeast(entry, query('hot:yes'), spec, undefined, { thorough: true });
      await pivots.keysAtLeast(entry, query('*'), spec);
      expect(await buffered(warm)).toBe(atOpen);
      // A pass over the records does read their pages (the measure can tell).
      const pivot = await new DuckDbPivotEngine(warm).pivot(entry, query('hot:yes'), spec, MAX_CELLS);
      expect(pivot.keys.rows).toBe(3000);
      expect(await buffered(warm)).toBeGreaterThan(atOpen);
    } finally {
      await warm.close();
      await cold.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { CrosstabGrid } from '@quarry/contract';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, restrictedQuery, type FieldDef, type Reader } from '@quarry/query-language';
import { DuckDBInstance } from '@duckdb/node-api';
import { attachableFile, SnapshotEngine, type SnapshotEngineOptions } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import { pivotModel, type Agg, type ModelSpec, type ModelTotal } from '../../../../tests/support/pivot-model';
import { toChartGrid } from '../domain/crosstab-grid';
import { buildPivotTable } from '../domain/pivot-table';
import type { CompletePivot } from '@quarry/contract';
import { crosstabSpec, MAX_CELLS } from '../domain/crosstab-spec';
import { crosstabInput } from '../../test-support/crosstab-input';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';

type Rec = Record<string, unknown>;

/** Deterministic records with every kind of gap: null and '' text, null numbers, dates and booleans. */
function makeRecords(n: number): Rec[] {
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const pad = (x: number) => String(x).padStart(2, '0');
  return Array.from({ length: n }, () => ({
    region: pick(['North', 'north', 'South', 'East', 'West', '', null]),
    city: pick(['San Francisco', 'New York', 'Oslo', 'São Paulo', 'oslo', '', null]),
    code: pick(['SFO', 'LAX', 'ord', 'Ord', 'JFK', null]),
    day: rnd() < 0.1 ? null : `2024-${pad(1 + Math.floor(rnd() * 3))}-${pad(1 + Math.floor(rnd() * 4))}`,
    at:
      rnd() < 0.1
        ? null
        : `202${Math.floor(rnd() * 2)}-${pad(1 + Math.floor(rnd() * 12))}-${pad(1 + Math.floor(rnd() * 28))} ${pad(Math.floor(rnd() * 24))}:15:00`,
    since: rnd() < 0.1 ? null : `${2018 + Math.floor(rnd() * 4)}-06-${pad(1 + Math.floor(rnd() * 28))}`,
    amount: rnd() < 0.15 ? null : Math.round(rnd() * 20000 - 5000) / 100,
    qty: rnd() < 0.15 ? null : Math.floor(rnd() * 6) - 1,
    flag: rnd() < 0.2 ? null : rnd() < 0.5,
  }));
}

const RECORDS = makeRecords(2000);
const blank = (v: unknown) => v === null || v === undefined || v === '';
const LABELS: Record<string, (v: string) => string> = {
  day: (v) => v.slice(0, 10),
  at: (v) => v.slice(0, 7),
  since: (v) => v.slice(0, 4),
};
const label = (field: string, v: unknown) =>
  blank(v) ? '(blank)' : LABELS[field] ? LABELS[field](String(v)) : String(v);
const VIEWS = [
  { name: 'Cities', field: 'city' },
  { name: 'Codes', field: 'code' },
  { name: 'Days', field: 'day' },
  { name: 'Quantities', field: 'qty' },
];

/** The grid in the model's shape: row label path → column path (with the total's name) → value. */
function gridCells(grid: CrosstabGrid, model: ModelSpec) {
  const nameRow = model.totals.length > 1 || model.columns.length === 0;
  const colPath = (labels: string[], name: string) => [...labels, ...(nameRow ? [name] : [])].join(' | ');
  const totalPath = (name: string) =>
    colPath(
      model.columns.map(() => 'Total'),
      name,
    );
  const columns: string[] = [];
  if (model.columns.length)
    for (const c of grid.columns) for (const t of model.totals) columns.push(colPath(c, t.name));
  for (const t of model.totals) columns.push(model.columns.length ? totalPath(t.name) : colPath([], t.name));
  const cells = new Map<string, Map<string, number | null>>();
  const fill = (key: string, perColumn: Array<Array<number | null>>, total: Array<number | null>) => {
    const m = new Map<string, number | null>();
    if (model.columns.length)
      grid.columns.forEach((c, ci) => model.totals.forEach((t, ti) => m.set(colPath(c, t.name), perColumn[ci][ti])));
    model.totals.forEach((t, ti) => m.set(model.columns.length ? totalPath(t.name) : colPath([], t.name), total[ti]));
    cells.set(key, m);
  };
  grid.rows.forEach((r, ri) => fill(r.join(' | '), grid.cells[ri], grid.rowTotals[ri]));
  fill('Total', grid.columnTotals, grid.grandTotals);
  return { rows: [...grid.rows.map((r) => r.join(' | ')), 'Total'], columns, cells };
}

describe('DuckDbPivotEngine: one-scan planner against plain JS', () => {
  let dir: string;
  let engine: SnapshotEngine;
  let pivots: DuckDbPivotEngine;
  let entry: IndexEntry;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-pivot-'));
    const file = path.join(dir, 'gaps.json');
    fs.writeFileSync(file, JSON.stringify(RECORDS));
    entry = await builtEntry({
      name: 'gaps',
      file,
      dataDir: dir,
      types: {},
      grains: { at: 'month', since: 'year' },
      views: VIEWS,
    });
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

  it('stores the fields with the types the cases rely on', () => {
    const types = Object.fromEntries(entry.fields.map((f) => [f.name, f.grain ? `${f.type}:${f.grain}` : f.type]));
    expect(types).toEqual({
      region: 'string',
      city: 'string',
      code: 'string',
      day: 'date',
      at: 'date:month',
      since: 'date:year',
      amount: 'number',
      qty: 'integer',
      flag: 'boolean',
    });
  });

  interface Case {
    rows: string[];
    columns?: Array<{ field: string; reverse?: boolean }>;
    totals: ModelTotal[];
  }

  const input = (c: Case): CompletePivot =>
    crosstabInput({
      rows: c.rows,
      columns: (c.columns ?? []).map((x) => ({ field: x.field, reverse: x.reverse ?? false })),
      totals: c.totals.map((t) => {
        const view = t.distinct ? VIEWS.find((v) => v.field === t.distinct)?.name : undefined;
        return { aggregationType: t.agg, field: view ? '' : (t.field ?? ''), dynamicView: view ?? '', name: t.name };
      }),
    });

  async function expectPivot(
    c: Case,
    records: Rec[],
    where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() }),
  ) {
    const spec = crosstabSpec(entry, input(c));
    const model: ModelSpec = { rows: c.rows, columns: c.columns ?? [], totals: c.totals, label };
    const result = await pivots.pivot(entry, where, spec, MAX_CELLS);
    const got = gridCells(toChartGrid(buildPivotTable(spec, result.groups)), model);
    const want = pivotModel(records, model);
    expect(got.rows).toEqual(want.rows);
    expect(got.columns).toEqual(want.columns);
    for (const [rowKey, wantRow] of want.cells) {
      for (const [col, v] of wantRow) {
        const g = got.cells.get(rowKey)?.get(col);
        if (v === null) expect([rowKey, col, g]).toEqual([rowKey, col, null]);
        else expect(g).toBeCloseTo(v, 6);
      }
    }
    // The key counts come from the same pass as the groups.
    expect(result.keys).toEqual({
      rows: want.rows.length - 1,
      columns: c.columns?.length
        ? new Set(records.map((r) => JSON.stringify(c.columns!.map((x) => label(x.field, r[x.field]))))).size
        : 1,
    });
    return result;
  }

  const EVERY_AGGREGATION: ModelTotal[] = [
    { agg: 'Count', name: 'records' },
    { agg: 'Count', field: 'city', name: 'cities given' },
    { agg: 'Count', field: 'amount', name: 'amounts given' },
    { agg: 'Sum', field: 'amount', name: 'sum' },
    { agg: 'Average', field: 'amount', name: 'avg' },
    { agg: 'Min', field: 'qty', name: 'min' },
    { agg: 'Max', field: 'amount', name: 'max' },
    { agg: 'Average', field: 'qty', name: 'avg qty' },
  ];

  it('no column fields: every aggregation, over values with nulls', () =>
    expectPivot({ rows: ['region'], totals: EVERY_AGGREGATION }, RECORDS));

  it('every aggregation where whole groups have no value (Sum, Average, Min, Max are empty, counts 0)', async () => {
    // Only records without an amount: every amount measure of every group is empty, its count 0.
    const where = parseQuery('NOT amount:*', { fields: entry.fields as FieldDef[], now: Date.now() });
    await expectPivot(
      { rows: ['code'], columns: [{ field: 'flag' }], totals: EVERY_AGGREGATION },
      RECORDS.filter((r) => r.amount === null),
      where,
    );
  });

  it('two levels on each side, one reversed, dates by month', () =>
    expectPivot(
      {
        rows: ['region', 'code'],
        columns: [{ field: 'flag', reverse: true }, { field: 'at' }],
        totals: [
          { agg: 'Count', name: 'n' },
          { agg: 'Average', field: 'amount', name: 'avg' },
        ],
      },
      RECORDS,
    ));

  it('distinct views at every level: cells, row totals, column totals and the grand total', () =>
    expectPivot(
      {
        rows: ['region'],
        columns: [{ field: 'day' }],
        totals: [
          { agg: 'Count', distinct: 'city', name: 'Count (Cities)' },
          { agg: 'Count', distinct: 'code', name: 'Count (Codes)' },
          { agg: 'Count', distinct: 'qty', name: 'Count (Quantities)' },
          { agg: 'Sum', field: 'qty', name: 'sum qty' },
        ],
      },
      RECORDS,
    ));

  it('a distinct view of a field that is also an axis, and of a date', () =>
    expectPivot(
      {
        rows: ['code', 'region'],
        columns: [{ field: 'since' }],
        totals: [
          { agg: 'Count', distinct: 'code', name: 'Count (Codes)' },
          { agg: 'Count', distinct: 'day', name: 'Count (Days)' },
        ],
      },
      RECORDS,
    ));

  it('(blank) keys: null and empty text form one group, on rows and columns', async () => {
    const result = await expectPivot(
      { rows: ['city'], columns: [{ field: 'region' }], totals: [{ agg: 'Count', name: 'n' }] },
      RECORDS,
    );
    const blanks = result.groups.filter(
      (g) => g.rowKey.length === 1 && g.columnKey.length === 0 && g.rowKey[0] === null,
    );
    expect(blanks).toHaveLength(1);
    expect(blanks[0].values[0]).toBe(RECORDS.filter((r) => blank(r.city)).length);
  });

  it('numeric and boolean axes, dates by day and by year', () =>
    expectPivot(
      {
        rows: ['qty', 'flag'],
        columns: [{ field: 'since' }, { field: 'day', reverse: true }],
        totals: [{ agg: 'Sum', field: 'amount', name: 'sum' }],
      },
      RECORDS,
    ));

  it('a realm and a query: exactly the slice both allow', async () => {
    const reader: Reader = {
      admin: false,
      indexes: ['gaps'],
      realms: [
        { index: 'gaps', query: 'region:north' },
        { index: 'gaps', query: 'code:SFO' },
      ],
    };
    const where = restrictedQuery(reader, 'gaps', 'amount:>10 AND NOT city:oslo', {
      fields: entry.fields as FieldDef[],
      now: Date.now(),
    });
    const words = (v: unknown) =>
      blank(v)
        ? []
        : String(v)
            .toLowerCase()
            .split(/[^\p{L}\p{N}]+/u);
    const slice = RECORDS.filter(
      (r) =>
        (words(r.region).includes('north') || words(r.code).includes('sfo')) &&
        typeof r.amount === 'number' &&
        r.amount > 10 &&
        !words(r.city).includes('oslo'),
    );
    expect(slice.length).toBeGreaterThan(50);
    await expectPivot(
      {
        rows: ['region'],
        columns: [{ field: 'code' }],
        totals: [
          { agg: 'Sum', field: 'amount', name: 'sum' },
          { agg: 'Count', distinct: 'city', name: 'Count (Cities)' },
        ],
      },
      slice,
      where,
    );
  });

  it.each([
    ['summed in JS', [] as ModelTotal[], [0, null, 0]],
    ['rolled up in DuckDB', [{ agg: 'Count', distinct: 'city', name: 'c' }] as ModelTotal[], [0, null, 0, 0]],
  ])(
    'a filter that matches nothing (%s): no rows, a grand total of 0 records and empty measures',
    async (_, extra, grand) => {
      const where = parseQuery('code:nowhere', { fields: entry.fields as FieldDef[], now: Date.now() });
      const totals: ModelTotal[] = [
        { agg: 'Count', name: 'n' },
        { agg: 'Sum', field: 'amount', name: 'sum' },
        { agg: 'Count', field: 'city', name: 'cities' },
        ...extra,
      ];
      const result = await expectPivot({ rows: ['region'], columns: [{ field: 'code' }], totals }, [], where);
      expect(result.groups).toEqual([{ rowKey: [], columnKey: [], values: grand }]);
    },
  );

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

  it('random pivots (fields, levels, reverse, every aggregation, views) agree with plain JS', async () => {
    const axisFields = ['region', 'city', 'code', 'day', 'at', 'since', 'qty', 'flag'];
    const total = fc.oneof(
      fc.record({ agg: fc.constantFrom<Agg>('Sum', 'Average', 'Min', 'Max'), field: fc.constantFrom('amount', 'qty') }),
      fc.record({ agg: fc.constant<Agg>('Count'), field: fc.constantFrom(undefined, 'city', 'amount', 'flag', 'day') }),
      fc.record({ agg: fc.constant<Agg>('Count'), distinct: fc.constantFrom('city', 'code', 'day', 'qty') }),
    );
    const axis = fc.record({ field: fc.constantFrom(...axisFields), reverse: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...axisFields), { minLength: 1, maxLength: 2 }),
        fc.array(axis, { maxLength: 2 }),
        fc.array(total, { minLength: 1, maxLength: 3 }),
        async (rows, columns, totals) => {
          const named = totals.map((t, i): ModelTotal => ({ ...t, name: `t${i}` }));
          await expectPivot({ rows, columns, totals: named }, RECORDS);
        },
      ),
      { numRuns: 25, seed: 20261122 },
    );
  }, 120000);
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
    await c.run('DROP TABLE quarry_sample');
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

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { CrosstabGrid } from '@quarry/contract';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, restrictedQuery, type FieldDef, type Reader } from '@quarry/query-language';
import { builtEntry } from '@quarry/testkit';
import { pivotModel, type Agg, type ModelSpec, type ModelTotal } from '../../../../../tests/support/pivot-model';
import { toChartGrid } from '../../domain/crosstab-grid';
import { buildPivotTable } from '../../domain/pivot-table';
import type { CompletePivot } from '@quarry/contract';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { crosstabInput } from '../../../test-support/crosstab-input';
import type { PivotEngine } from '../../ports/pivot-engine.port';

export type Rec = Record<string, unknown>;

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

export const RECORDS = makeRecords(2000);
export const blank = (v: unknown) => v === null || v === undefined || v === '';
const LABELS: Record<string, (v: string) => string> = {
  day: (v) => v.slice(0, 10),
  at: (v) => v.slice(0, 7),
  since: (v) => v.slice(0, 4),
};
export const label = (field: string, v: unknown) =>
  blank(v) ? '(blank)' : LABELS[field] ? LABELS[field](String(v)) : String(v);
export const VIEWS = [
  { name: 'Cities', field: 'city' },
  { name: 'Codes', field: 'code' },
  { name: 'Days', field: 'day' },
  { name: 'Quantities', field: 'qty' },
];

/** The grid in the model's shape: row label path → column path (with the total's name) → value. */
export function gridCells(grid: CrosstabGrid, model: ModelSpec) {
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

/** The records above loaded as index `gaps` in a fresh data folder (the caller removes it). */
export async function gapsIndex(): Promise<{ dir: string; entry: IndexEntry }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-pivot-'));
  const file = path.join(dir, 'gaps.json');
  fs.writeFileSync(file, JSON.stringify(RECORDS));
  const entry = await builtEntry({
    name: 'gaps',
    file,
    dataDir: dir,
    types: {},
    grains: { at: 'month', since: 'year' },
    views: VIEWS,
  });
  return { dir, entry };
}

/** An engine over a data folder holding the conformance index; `close` releases what it holds. */
export interface OpenedPivotEngine {
  pivots: PivotEngine;
  close(): Promise<void>;
}

/**
 * The conformance index opened on an engine for the enclosing describe (its beforeAll and afterAll):
 * read what it holds from a test or a later beforeAll.
 */
export function useGapsIndex(
  open: (dir: string, entry: IndexEntry) => Promise<OpenedPivotEngine>,
): () => { pivots: PivotEngine; entry: IndexEntry } {
  let dir: string | undefined;
  let entry: IndexEntry | undefined;
  let opened: OpenedPivotEngine | undefined;
  beforeAll(async () => {
    ({ dir, entry } = await gapsIndex());
    opened = await open(dir, entry);
  }, 120000);
  afterAll(async () => {
    await opened?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (!opened || !entry) throw new Error('the conformance index did not open');
    return { pivots: opened.pivots, entry };
  };
}

/**
 * The behaviour every PivotEngine adapter must show (see the port), against plain JS over the same
 * records (tests/support/pivot-model): run once per adapter, as the other ports' conformance suites are.
 * `open` gets the data folder and the built entry (a ClickHouse server copies the version in first).
 */
export function pivotEngineConformance(
  name: string,
  open: (dir: string, entry: IndexEntry) => Promise<OpenedPivotEngine>,
): void {
  describe(`${name}: every crosstab feature against plain JS`, () => {
    let pivots: PivotEngine;
    let entry: IndexEntry;
    const gaps = useGapsIndex(open);
    beforeAll(() => ({ pivots, entry } = gaps()));

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

    it.each([
      ['records only', [{ agg: 'Count' as const, name: 'n' }]],
      ['a dynamic view', [{ agg: 'Count' as const, distinct: 'code', name: 'c' }]],
    ])(
      'over the cell limit (%s): the key counts come back and no group; exactly at the limit every group',
      async (_, totals) => {
        const where = parseQuery('*', { fields: entry.fields as FieldDef[], now: Date.now() });
        const spec = crosstabSpec(entry, input({ rows: ['region', 'city'], columns: [{ field: 'day' }], totals }));
        const full = await pivots.pivot(entry, where, spec, MAX_CELLS);
        const cells = full.keys.rows * full.keys.columns;
        expect(full.groups.length).toBeGreaterThan(cells / 2);
        for (const maxCells of [cells - 1, 10]) {
          const over = await pivots.pivot(entry, where, spec, maxCells);
          expect(over).toMatchObject({ keys: full.keys, groups: [] });
          expect(over.tooManyGroups).toBeUndefined();
        }
        expect((await pivots.pivot(entry, where, spec, cells)).groups).toHaveLength(full.groups.length);
      },
    );

    it('random pivots (fields, levels, reverse, every aggregation, views) agree with plain JS', async () => {
      const axisFields = ['region', 'city', 'code', 'day', 'at', 'since', 'qty', 'flag'];
      const total = fc.oneof(
        fc.record({
          agg: fc.constantFrom<Agg>('Sum', 'Average', 'Min', 'Max'),
          field: fc.constantFrom('amount', 'qty'),
        }),
        fc.record({
          agg: fc.constant<Agg>('Count'),
          field: fc.constantFrom(undefined, 'city', 'amount', 'flag', 'day'),
        }),
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
}

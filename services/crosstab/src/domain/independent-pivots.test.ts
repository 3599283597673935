import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { ResultCache } from '@quarry/result-cache';
import type { PivotEngine, PivotRestriction, PivotResult } from '../ports/pivot-engine.port';
import { crosstabInput } from '../../test-support/crosstab-input';
import type { GroupRow } from './axis-value';
import type { CrosstabSpec } from './crosstab-spec';
import { compareCells, independentPivots } from './independent-pivots';
import { RunCrosstabUseCase } from './run-crosstab.use-case';

const entry: IndexEntry = {
  name: 'sales',
  description: '',
  fields: [
    { name: 'region', type: 'string' },
    { name: 'amount', type: 'number' },
  ],
  views: [],
  recordCount: 3,
  version: 4,
  snapshot: 'indexes/sales/4.parquet',
  sha256: 'f'.repeat(64),
  updatedAt: '2026-01-01T00:00:00.000Z',
  rollups: [{ name: 'by-region', rows: ['region'], columns: [], totals: [{ kind: 'sum', field: 'amount' }] }],
};
const catalog = { getIndex: async (name: string) => (name === entry.name ? entry : null) } as unknown as IndexCatalog;
const admin = { admin: true, indexes: [], realms: [] };
const noCache: ResultCache = { enabled: false, get: () => undefined, set: () => undefined };

const g = (rowKey: GroupRow['rowKey'], ...values: Array<number | null>): GroupRow => ({
  rowKey,
  columnKey: [],
  values,
});

/**
 * Sums of amount by region, right from the records; `rollupOff` (a broken rollup) is added to every value
 * it answers whenever the entry it is given still names its rollups: what an independent path must catch.
 */
class SalesEngine implements PivotEngine {
  readonly engineName = 'fake';
  readonly seen: Array<{ rollups: boolean; restrict: PivotRestriction }> = [];
  constructor(private readonly rollupOff = 0) {}
  async pivot(
    e: IndexEntry,
    _w: unknown,
    _s: CrosstabSpec,
    _m: number,
    _sig?: AbortSignal,
    restrict: PivotRestriction = {},
  ): Promise<PivotResult> {
    const viaRollup = (e.rollups?.length ?? 0) > 0;
    this.seen.push({ rollups: viaRollup, restrict });
    const off = viaRollup ? this.rollupOff : 0;
    const groups = [g(['north'], 10.1 + 20.2 + off), g(['south'], 5 + off), g([], 35.3 + off)];
    return { keys: { rows: 2, columns: 1 }, groups, ...(viaRollup ? { servedBy: 'by-region' } : {}) };
  }
  keysAtLeast = async () => ({ rows: 2, outerRows: 2, columns: 1, outerColumns: 1 });
  fieldRange = async () => null;
  forget(): void {}
}

const request = crosstabInput({
  index: 'sales',
  query: '*',
  rows: ['region'],
  totals: [{ aggregationType: 'Sum', field: 'amount', dynamicView: '', name: '' }],
});

describe('verify: true', () => {
  it('recomputes without the rollup and reports every cell the answer got wrong', async () => {
    const broken = new SalesEngine(1);
    const run = new RunCrosstabUseCase(catalog, broken, noCache);
    const out = await run.run(admin, request, 'json', { verify: true });
    expect(out.servedBy).toBe('by-region');
    expect(out.verify).toEqual({ cells: 3, mismatched: 3 });
    expect(out.mismatches?.[0]).toMatchObject({ rowKey: ['north'], total: 0, recomputed: 10.1 + 20.2 });
    // The recomputation's pass saw an entry without rollups: the independent path.
    expect(broken.seen.map((s) => s.rollups)).toEqual([true, false]);
    expect(out).toMatchObject({ cache: 'bypass', engine: 'fake', snapshotSha256: 'f'.repeat(64), indexVersion: 4 });
  });

  it('agrees with a sound answer, and says nothing without verify', async () => {
    const run = new RunCrosstabUseCase(catalog, new SalesEngine(0), noCache);
    const out = await run.run(admin, request, 'json', { verify: true });
    expect(out.verify).toEqual({ cells: 3, mismatched: 0 });
    expect(out.mismatches).toBeUndefined();
    // Without verify, no recomputation and nothing said.
    const plain = await run.run(admin, request, 'json');
    expect(plain.verify).toBeUndefined();
  });
});

describe('independentPivots', () => {
  it('asks for plain passes only: no rollup, no twin, no fold', async () => {
    const base = new SalesEngine();
    const plain = independentPivots(base);
    const restrict: PivotRestriction = { rows: ['north'], fold: true, twins: [] };
    await plain.pivot(entry, { kind: 'all' }, {} as CrosstabSpec, 10, undefined, restrict);
    expect(base.seen[0]).toEqual({ rollups: false, restrict: { rows: ['north'] } });
    expect(plain.engineName).toBe('fake');
  });
});

describe('compareCells', () => {
  it('counts the answer’s values, a differing value, a group missing on either side', () => {
    const answered = [g(['a'], 1, 2), g(['b'], 3, null), g([], 4, 5)];
    const recomputed = [g(['a'], 1, 2.5), g(['b'], 3, null), g(['c'], 9, 9)];
    const out = compareCells(answered, recomputed);
    expect(out.cells).toBe(6);
    // a's second value; the grand total's two values (missing); c's two values (not answered).
    expect(out.mismatched).toBe(5);
    expect(out.first[0]).toEqual({ rowKey: ['a'], columnKey: [], total: 1, answered: 2, recomputed: 2.5 });
  });

  it('tells null from 0, and Other groups from the blank key', () => {
    expect(compareCells([g(['a'], 0)], [g(['a'], null)]).mismatched).toBe(1);
    const other: GroupRow = { rowKey: [], columnKey: [], values: [1], rowOther: true };
    expect(compareCells([other], [g([], 1)]).mismatched).toBe(2);
    expect(compareCells([other], [{ ...other }]).mismatched).toBe(0);
  });

  it('lets float noise pass and nothing larger', () => {
    expect(compareCells([g([], 0.1 + 0.2)], [g([], 0.3)]).mismatched).toBe(0);
    expect(compareCells([g([], 1e6)], [g([], 1e6 + 1e-2)]).mismatched).toBe(1);
    expect(compareCells([g([], NaN)], [g([], NaN)]).mismatched).toBe(0);
  });
});

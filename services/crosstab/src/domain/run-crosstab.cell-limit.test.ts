import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { KeysAtLeast, PivotEngine, PivotKeys, PivotResult } from '../ports/pivot-engine.port';
import type { ResultCache } from '@quarry/result-cache';
import type { GroupRow } from './axis-value';
import { MAX_CELLS, type CrosstabSpec } from './crosstab-spec';
import { crosstabInput } from '../../test-support/crosstab-input';
import { RunCrosstabUseCase } from './run-crosstab.use-case';

const entry: IndexEntry = {
  name: 'flights',
  description: '',
  fields: [
    { name: 'origin', type: 'string' },
    { name: 'destination', type: 'string' },
    { name: 'delay', type: 'integer' },
  ],
  views: [],
  recordCount: 0,
  version: 1,
  snapshot: 'indexes/flights/1.parquet',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const catalog = { getIndex: async (name: string) => (name === entry.name ? entry : null) } as unknown as IndexCatalog;
const admin = { admin: true, indexes: [], realms: [] };
// No cache: every call reaches the engine.
const noCache: ResultCache = { enabled: false, get: () => undefined, set: () => undefined };

/** An engine that reports the given key counts, and groups only when under the limit it is told. */
class CountingEngine implements PivotEngine {
  readonly engineName = 'counting';
  readonly calls: Array<{ maxCells: number; spec: CrosstabSpec; where: QueryNode }> = [];
  constructor(
    private readonly keys: PivotKeys,
    private readonly least: KeysAtLeast = { rows: 0, outerRows: 0, columns: 0, outerColumns: 0 },
  ) {}

  /** What each estimate was asked: 'first' or 'thorough'. */
  readonly estimates: string[] = [];
  /** What a thorough sample sees (by default, what the first one saw). */
  thorough: KeysAtLeast | undefined;

  keysAtLeast = async (
    _e: IndexEntry,
    _w: QueryNode,
    _s: CrosstabSpec,
    _sig?: AbortSignal,
    o?: { thorough?: boolean },
  ) => {
    this.estimates.push(o?.thorough ? 'thorough' : 'first');
    return o?.thorough ? (this.thorough ?? this.least) : this.least;
  };

  async pivot(_entry: IndexEntry, where: QueryNode, spec: CrosstabSpec, maxCells: number): Promise<PivotResult> {
    this.calls.push({ maxCells, spec, where });
    const cells = this.keys.rows * Math.max(this.keys.columns, 1) * spec.totals.length;
    const groups: GroupRow[] =
      cells > maxCells
        ? []
        : [
            { rowKey: ['SFO'], columnKey: ['LAX'], values: spec.totals.map(() => 1) },
            { rowKey: ['SFO'], columnKey: [], values: spec.totals.map(() => 1) },
            { rowKey: [], columnKey: ['LAX'], values: spec.totals.map(() => 1) },
            { rowKey: [], columnKey: [], values: spec.totals.map(() => 1) },
          ];
    return { keys: this.keys, groups };
  }

  forget(): void {}

  fieldRange = async () => null;
}

const request = (totals: number) =>
  crosstabInput({
    index: 'flights',
    query: '*',
    rows: ['origin'],
    columns: [{ field: 'destination', reverse: false }],
    totals: Array.from({ length: totals }, () => ({ aggregationType: 'Count', field: '', dynamicView: '', name: '' })),
  });

describe('RunCrosstabUseCase and the 100,000-cell limit', () => {
  it('asks the engine once, with the limit, and refuses an oversized pivot naming its size', async () => {
    const engine = new CountingEngine({ rows: 50_001, columns: 1 });
    const run = new RunCrosstabUseCase(catalog, engine, noCache);
    await expect(run.run(admin, request(2), 'html')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringContaining(
        'would have 100002 cells (50001 rows x 1 columns x 2 totals); the limit is 100000',
      ),
    });
    expect(engine.calls).toHaveLength(1);
    expect(engine.calls[0].maxCells).toBe(MAX_CELLS);
  });

  it('refuses from the key lower bounds before any pass, with the same code; a limit or a filter changes what they say', async () => {
    const least = { rows: 60_000, outerRows: 60_000, columns: 2, outerColumns: 2 };
    const engine = new CountingEngine({ rows: 60_000, columns: 2 }, least);
    const run = new RunCrosstabUseCase(catalog, engine, noCache);
    await expect(run.run(admin, request(1), 'html')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringContaining('would have 120000 cells or more (60000 rows x 2 columns x 1 totals)'),
    });
    expect(engine.calls).toHaveLength(0);
    // rowLimit 10 keeps at most 10 outer values: the bound says 20 cells, so the pivots run (this fake
    // engine then reports its full key counts whatever it is asked, and the pass refuses).
    await run.run(admin, { ...request(1), rowLimit: 10 }, 'html').catch(() => undefined);
    expect(engine.calls.length).toBeGreaterThan(0);
  });

  // Under a selective filter: the first sample kept few records and saw 100 x 100 keys
  // (20,000 cells of 2 totals, within a tenth of the limit); the thorough sample sees 250 x 250 (125,000).
  it('asks for a thorough sample when a selective filter’s first sample comes near the limit, and refuses from it', async () => {
    const seen = { rows: 100, outerRows: 100, columns: 100, outerColumns: 100, moreToSee: true };
    const engine = new CountingEngine({ rows: 250, columns: 250 }, seen);
    engine.thorough = { rows: 250, outerRows: 250, columns: 250, outerColumns: 250 };
    const run = new RunCrosstabUseCase(catalog, engine, noCache);
    await expect(run.run(admin, request(2), 'html')).rejects.toMatchObject({
      detail: expect.stringContaining('would have 125000 cells or more (250 rows x 250 columns x 2 totals)'),
    });
    expect(engine.estimates).toEqual(['first', 'thorough']);
    expect(engine.calls).toHaveLength(0);
  });

  it('asks for no thorough sample when the first saw every record it sampled, or is far from the limit', async () => {
    // Nothing more to see: the first sample's bound stands and the pass decides.
    const whole = new CountingEngine(
      { rows: 100, columns: 100 },
      { rows: 100, outerRows: 100, columns: 100, outerColumns: 100 },
    );
    await new RunCrosstabUseCase(catalog, whole, noCache).run(admin, request(2), 'html');
    expect(whole.estimates).toEqual(['first']);
    // More to see, but 20 x 20 x 2 = 800 cells are far from 100,000: not worth a larger sample.
    const far = new CountingEngine(
      { rows: 20, columns: 20 },
      { rows: 20, outerRows: 20, columns: 20, outerColumns: 20, moreToSee: true },
    );
    await new RunCrosstabUseCase(catalog, far, noCache).run(admin, request(2), 'html');
    expect(far.estimates).toEqual(['first']);
  });

  it('counts rows × columns × totals: the same keys pass with one total fewer', async () => {
    const engine = new CountingEngine({ rows: 50_000, columns: 2 });
    const run = new RunCrosstabUseCase(catalog, engine, noCache);
    const result = await run.run(admin, request(1), 'html');
    expect(result.rowCount).toBe(1);
    expect(result.payload).toContain('<table');
    await expect(run.run(admin, request(2), 'html')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('renders HTML only when asked for it', async () => {
    const run = new RunCrosstabUseCase(catalog, new CountingEngine({ rows: 1, columns: 1 }), noCache);
    const grid = await run.run(admin, request(1), 'grid');
    expect(grid.output).toBe('grid');
    expect(JSON.parse(grid.payload as string)).toMatchObject({ rows: [['SFO']], grandTotals: [1] });
  });

  describe('with subtotals, the limit holds for the table as drawn', () => {
    // Four fields where every outer value has one inner value (as origin/destination might on a filtered
    // index): each full key brings a subtotal row or column of its own, so the table doubles on each axis.
    const deep: IndexEntry = {
      ...entry,
      fields: ['a', 'b', 'x', 'y'].map((name) => ({ name, type: 'string' })),
    };
    const deepCatalog = { getIndex: async () => deep } as unknown as IndexCatalog;
    const ask = (subtotals: boolean) =>
      crosstabInput({
        index: 'flights',
        query: '*',
        rows: ['a', 'b'],
        columns: [
          { field: 'x', reverse: false },
          { field: 'y', reverse: false },
        ],
        totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: '' }],
        subtotals,
      });
    class DependentEngine implements PivotEngine {
      readonly engineName = 'dependent';
      constructor(private readonly n: number) {}
      async pivot(): Promise<PivotResult> {
        const groups: GroupRow[] = [];
        for (let i = 0; i < this.n; i++) {
          groups.push(
            { rowKey: [`a${i}`, `b${i}`], columnKey: [], values: [1] },
            { rowKey: [`a${i}`], columnKey: [], values: [1] },
          );
          groups.push(
            { rowKey: [], columnKey: [`x${i}`, `y${i}`], values: [1] },
            { rowKey: [], columnKey: [`x${i}`], values: [1] },
          );
        }
        return { keys: { rows: this.n, columns: this.n }, groups };
      }
      forget(): void {}
      fieldRange = async () => null;
      keysAtLeast = async () => ({ rows: 0, outerRows: 0, columns: 0, outerColumns: 0 });
    }

    it('200 x 200 cells (40,000) pass without subtotals and are refused with them (400 x 400 = 160,000)', async () => {
      const run = new RunCrosstabUseCase(deepCatalog, new DependentEngine(200), noCache);
      const plain = await run.run(admin, ask(false), 'json');
      expect([plain.rowCount, plain.columnCount]).toEqual([200, 200]);
      await expect(run.run(admin, ask(true), 'json')).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        detail: expect.stringContaining('With subtotals the crosstab would have more than 100000 cells'),
      });
      // Half the keys: 200 x 200 shown with subtotals, within the limit.
      const half = await new RunCrosstabUseCase(deepCatalog, new DependentEngine(100), noCache).run(
        admin,
        ask(true),
        'json',
      );
      expect([half.rowCount, half.columnCount]).toEqual([200, 200]);
    });

    it('refuses when the engine says the groups alone are over what the limit can show', async () => {
      const engine: PivotEngine = {
        pivot: async () => ({ keys: { rows: 1, columns: 1 }, groups: [], tooManyGroups: true }),
        engineName: 'test',
        forget: () => undefined,
        fieldRange: async () => null,
        keysAtLeast: async () => ({ rows: 0, outerRows: 0, columns: 0, outerColumns: 0 }),
      };
      await expect(
        new RunCrosstabUseCase(deepCatalog, engine, noCache).run(admin, ask(true), 'html'),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });
  });
});

import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { QueryNode, Reader } from '@quarry/query-language';
import type { CachedResult, CacheKey, ResultCache } from '@quarry/result-cache';
import type { PivotEngine } from '../ports/pivot-engine.port';
import type { GroupRow } from './axis-value';
import type { CrosstabSpec } from './crosstab-spec';
import { crosstabInput, type SentCrosstab } from '../../test-support/crosstab-input';
import { RunCrosstabUseCase, type RunCrosstabOptions } from './run-crosstab.use-case';

const movies = (version: number): IndexEntry => ({
  name: 'movies',
  description: '',
  fields: [
    { name: 'Title', type: 'string' },
    { name: 'Genre', type: 'string' },
    { name: 'Gross', type: 'number' },
  ],
  views: [],
  recordCount: 0,
  version,
  snapshot: `movies/${version}-${Math.random().toString(36).slice(2)}.duckdb`,
  updatedAt: '2026-01-01T00:00:00.000Z',
});

/** An in-memory stand-in with the port's contract, keyed by the serialized parts. */
class MapCache implements ResultCache {
  readonly entries = new Map<string, CachedResult>();
  constructor(readonly enabled = true) {}
  get(key: CacheKey) {
    return this.enabled ? this.entries.get(JSON.stringify(key)) : undefined;
  }
  set(key: CacheKey, value: CachedResult) {
    if (this.enabled) this.entries.set(JSON.stringify(key), value);
  }
}

const analyst: Reader = { admin: false, indexes: ['*'], realms: [] };
const realm = (query: string): Reader => ({ admin: false, indexes: ['*'], realms: [{ index: 'movies', query }] });

/** A pivot whose one row is labelled with the snapshot and the filter it was given, with one cell per total. */
function fixture(enabled = true) {
  let entry = movies(1);
  const pivots: Array<{ where: QueryNode; spec: CrosstabSpec }> = [];
  let rows = 1;
  const catalog = { getIndex: async (name: string) => (name === 'movies' ? entry : null) } as unknown as IndexCatalog;
  const engine: PivotEngine = {
    pivot: async (e: IndexEntry, where: QueryNode, spec: CrosstabSpec) => {
      pivots.push({ where, spec });
      const label = `${e.snapshot} ${JSON.stringify(where)}`;
      const values = spec.totals.map(() => pivots.length);
      const columnKey = spec.columns.map(() => 'c');
      const groups: GroupRow[] = [
        { rowKey: [label], columnKey, values },
        { rowKey: [label], columnKey: [], values },
        ...(spec.columns.length ? [{ rowKey: [], columnKey, values }] : []),
        { rowKey: [], columnKey: [], values },
      ];
      return { keys: { rows, columns: 1 }, groups: rows > 1 ? [] : groups };
    },
    forget: () => undefined,
    fieldRange: async () => null,
    keysAtLeast: async () => ({ rows: 0, outerRows: 0, columns: 0, outerColumns: 0 }),
  } as unknown as PivotEngine;
  const cache = new MapCache(enabled);
  const useCase = new RunCrosstabUseCase(catalog, engine, cache, () => Date.UTC(2026, 0, 1));
  const run = (
    input: Partial<SentCrosstab> = {},
    reader: Reader = analyst,
    output: 'html' | 'grid' = 'html',
    opts: RunCrosstabOptions = {},
  ) =>
    useCase.run(
      reader,
      crosstabInput({
        index: 'movies',
        query: '',
        rows: ['Genre'],
        columns: [],
        totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: '' }],
        ...input,
      }),
      output,
      opts,
    );
  return {
    pivots,
    cache,
    run,
    reload: () => (entry = movies(entry.version + 1)),
    snapshot: () => entry.snapshot,
    tooManyRows: () => (rows = 200_000),
  };
}

describe('RunCrosstabUseCase with the result cache', () => {
  it('answers a repeated call from the cache, identical to the first answer but for meta.cache', async () => {
    const f = fixture();
    const first = await f.run({ query: 'Title:star' });
    const again = await f.run({ query: 'Title:star' });
    expect([first.cache, again.cache]).toEqual(['miss', 'hit']);
    expect(first.payload).toContain('<table');
    expect({ ...again, cache: 'miss' }).toEqual(first);
    expect(f.pivots).toHaveLength(1);
  });

  it('keeps the table and the grid (for a chart) apart', async () => {
    const f = fixture();
    const html = await f.run();
    const grid = await f.run({}, analyst, 'grid');
    expect([html.cache, grid.cache]).toEqual(['miss', 'miss']);
    expect([html.output, grid.output]).toEqual(['html', 'grid']);
    expect(html.payload).toContain('<table');
    expect(JSON.parse(grid.payload as string)).toMatchObject({ rowFields: ['Genre'], totals: ['Count (Records)'] });
    const gridAgain = await f.run({}, analyst, 'grid');
    expect(gridAgain).toEqual({ ...grid, cache: 'hit' });
  });

  it('shares an entry between spellings of the same request, and only those', async () => {
    const f = fixture();
    await f.run({
      query: 'Title:star',
      columns: [{ field: 'Title', reverse: false }],
      totals: [{ aggregationType: 'Sum', field: 'Gross', dynamicView: '', name: '' }],
    });
    const same = await f.run({
      query: ' title:STAR ',
      columns: [{ field: 'title', reverse: false }],
      totals: [{ aggregationType: ' sum', field: 'gross', dynamicView: '', name: 'Sum (Gross)' }],
    });
    expect(same.cache).toBe('hit');
    const different: Array<Partial<SentCrosstab>> = [
      {
        query: 'Title:star',
        columns: [{ field: 'Title', reverse: true }],
        totals: [{ aggregationType: 'Sum', field: 'Gross', dynamicView: '', name: '' }],
      },
      {
        query: 'Title:star',
        columns: [{ field: 'Title', reverse: false }],
        totals: [{ aggregationType: 'Sum', field: 'Gross', dynamicView: '', name: 'Takings' }],
      },
      {
        query: 'Title:star',
        columns: [{ field: 'Title', reverse: false }],
        totals: [{ aggregationType: 'Max', field: 'Gross', dynamicView: '', name: '' }],
      },
      {
        query: 'Title:star',
        columns: [],
        totals: [{ aggregationType: 'Sum', field: 'Gross', dynamicView: '', name: '' }],
      },
      {
        query: 'Title:star*',
        columns: [{ field: 'Title', reverse: false }],
        totals: [{ aggregationType: 'Sum', field: 'Gross', dynamicView: '', name: '' }],
      },
      {
        query: 'Title:star',
        rows: ['Title'],
        columns: [{ field: 'Title', reverse: false }],
        totals: [{ aggregationType: 'Sum', field: 'Gross', dynamicView: '', name: '' }],
      },
    ];
    for (const input of different) expect((await f.run(input)).cache).toBe('miss');
    expect(f.pivots).toHaveLength(1 + different.length);
  });

  it('never answers a caller from an entry of callers with other realms', async () => {
    const f = fixture();
    const drama = await f.run({}, realm('Genre:drama'));
    const comedy = await f.run({}, realm('Genre:comedy'));
    const open = await f.run({}, analyst);
    expect([drama.cache, comedy.cache, open.cache]).toEqual(['miss', 'miss', 'miss']);
    expect(drama.payload).toContain('drama');
    expect(comedy.payload).toContain('comedy');
    expect(open.payload).not.toMatch(/drama|comedy/);
    expect((await f.run({}, realm('Genre:comedy'))).payload).toBe(comedy.payload);
  });

  it('misses after a reload and serves the new snapshot', async () => {
    const f = fixture();
    await f.run();
    f.reload();
    const after = await f.run();
    expect(after.cache).toBe('miss');
    expect(after.payload).toContain(f.snapshot());
  });

  it('bypasses with cache: false and when the cache is off, and never keeps a refusal', async () => {
    const f = fixture();
    await f.run();
    expect((await f.run({}, analyst, 'html', { cache: false })).cache).toBe('bypass');
    expect(f.pivots).toHaveLength(2);
    const off = fixture(false);
    expect((await off.run()).cache).toBe('bypass');
    expect((await off.run()).cache).toBe('bypass');

    const g = fixture();
    g.tooManyRows();
    for (let i = 0; i < 2; i++)
      await expect(g.run({ query: 'Genre:x' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(g.pivots).toHaveLength(2);
    expect(g.cache.entries.size).toBe(0);
  });
});

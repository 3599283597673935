import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { Reader } from '@quarry/query-language';
import { LruResultCache } from '@quarry/result-cache';
import type { SearchIndex, SearchPlan } from '../ports/search-index.port';
import { ExecuteQueryUseCase, type ExecuteQueryInput, type ExecuteQueryOptions } from './execute-query.use-case';

const movies = (version: number, snapshot = `movies/${version}.duckdb`): IndexEntry => ({
  name: 'movies',
  description: '',
  fields: [
    { name: 'Title', type: 'string' },
    { name: 'Genre', type: 'string' },
  ],
  views: [],
  recordCount: 0,
  version,
  snapshot,
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const analyst: Reader = { admin: false, indexes: ['*'], realms: [] };
const realm = (query: string): Reader => ({ admin: false, indexes: ['*'], realms: [{ index: 'movies', query }] });

/**
 * An engine whose answer names everything it was asked (snapshot, filter, sort, window), so a test sees
 * that each call got the records of its own plan, and counts its calls.
 */
function fixture(cacheBytes = 1_000_000) {
  const published = new Map<string, IndexEntry>([
    ['movies', movies(1)],
    ['films', { ...movies(1, 'films/1.duckdb'), name: 'films' }],
  ]);
  const searched: SearchPlan[] = [];
  let failNext = false;
  const catalog = { getIndex: async (name: string) => published.get(name) ?? null } as unknown as IndexCatalog;
  const search = {
    search: async (entry: IndexEntry, plan: SearchPlan) => {
      searched.push(plan);
      if (failNext) {
        failNext = false;
        throw new Error('engine failure');
      }
      const { signal: _signal, ...asked } = plan;
      return {
        total: 1000 + searched.length,
        recordsJson: JSON.stringify([{ snapshot: entry.snapshot, ...asked }]),
        engine: 'test',
      };
    },
    forget: () => undefined,
  } as unknown as SearchIndex;
  const cache = new LruResultCache(cacheBytes);
  const useCase = new ExecuteQueryUseCase(catalog, search, cache, () => Date.UTC(2026, 0, 1));
  const run = (input: Partial<ExecuteQueryInput>, reader: Reader = analyst, opts: ExecuteQueryOptions = {}) =>
    useCase.searchIndex(reader, { index: 'movies', query: '*', page: 1, pageSize: 50, sort: [], ...input }, opts);
  return { published, searched, cache, run, failNext: () => (failNext = true) };
}

describe('ExecuteQueryUseCase with the result cache', () => {
  it('answers a repeated call from the cache, identical to the first answer but for meta.cache', async () => {
    const f = fixture();
    const first = await f.run({
      query: 'Title:star',
      page: 2,
      pageSize: 10,
      sort: [{ field: 'Title', direction: 'desc' }],
    });
    const again = await f.run({
      query: 'Title:star',
      page: 2,
      pageSize: 10,
      sort: [{ field: 'Title', direction: 'desc' }],
    });
    expect(first.cache).toBe('miss');
    expect(again.cache).toBe('hit');
    expect({ ...again, cache: 'miss' }).toEqual(first);
    expect(f.searched).toHaveLength(1);
  });

  it('shares an entry only between spellings that compile to the same search', async () => {
    const f = fixture();
    await f.run({ query: 'Title:star', sort: [{ field: 'Title', direction: 'asc' }] });
    const same: Array<Partial<ExecuteQueryInput>> = [
      { query: '  Title:star  ', sort: [{ field: 'Title', direction: 'asc' }] },
      { query: 'title:STAR', sort: [{ field: 'title', direction: 'asc' }] },
      { query: 'Title:star', page: 1, pageSize: 50, sort: [{ field: 'Title', direction: 'asc' }] },
    ];
    for (const input of same) expect((await f.run(input)).cache).toBe('hit');
    expect(f.searched).toHaveLength(1);

    const different: Array<Partial<ExecuteQueryInput>> = [
      { query: 'Title:star*', sort: [{ field: 'Title', direction: 'asc' }] },
      { query: 'Genre:star', sort: [{ field: 'Title', direction: 'asc' }] },
      { query: 'Title:star', sort: [{ field: 'Title', direction: 'desc' }] },
      { query: 'Title:star', sort: [{ field: 'Genre', direction: 'asc' }] },
      { query: 'Title:star', sort: [] },
      { query: 'Title:star', page: 2, sort: [{ field: 'Title', direction: 'asc' }] },
      { query: 'Title:star', pageSize: 49, sort: [{ field: 'Title', direction: 'asc' }] },
      { query: 'Title:star', index: 'films', sort: [{ field: 'Title', direction: 'asc' }] },
    ];
    for (const input of different) {
      const out = await f.run(input);
      expect(out.cache).toBe('miss');
      const plan = f.searched[f.searched.length - 1];
      expect(JSON.parse(out.recordsJson)).toEqual([
        {
          snapshot: `${input.index ?? 'movies'}/1.duckdb`,
          where: plan.where,
          // Unsorted, a query of words ranks: its score query travels with the plan.
          ...(plan.score ? { score: plan.score } : {}),
          sort: plan.sort,
          offset: plan.offset,
          limit: plan.limit,
        },
      ]);
    }
    expect(f.searched).toHaveLength(1 + different.length);
  });

  it('never answers a caller from another caller entry when their realms differ', async () => {
    const f = fixture();
    const drama = await f.run({ query: 'Title:star' }, realm('Genre:drama'));
    const comedy = await f.run({ query: 'Title:star' }, realm('Genre:comedy'));
    const open = await f.run({ query: 'Title:star' }, analyst);
    expect([drama.cache, comedy.cache, open.cache]).toEqual(['miss', 'miss', 'miss']);
    expect(drama.recordsJson).toContain('drama');
    expect(comedy.recordsJson).toContain('comedy');
    expect(open.recordsJson).not.toMatch(/drama|comedy/);
    // A realm on another index leaves this one's search, and so its entry, as an open caller's.
    const elsewhere: Reader = { admin: false, indexes: ['*'], realms: [{ index: 'films', query: 'Genre:drama' }] };
    expect((await f.run({ query: 'Title:star' }, elsewhere)).cache).toBe('hit');
    expect((await f.run({ query: 'Title:star' }, realm('Genre:drama'))).cache).toBe('hit');
  });

  it('misses after a reload (new version and snapshot) and after a drop and a new load of the same name', async () => {
    const f = fixture();
    expect((await f.run({ query: 'Title:star' })).cache).toBe('miss');
    f.published.set('movies', movies(2));
    const reloaded = await f.run({ query: 'Title:star' });
    expect(reloaded.cache).toBe('miss');
    expect(reloaded.recordsJson).toContain('movies/2.duckdb');

    f.published.delete('movies');
    await expect(f.run({ query: 'Title:star' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // Same version number, but each load writes a new snapshot file: still a miss.
    f.published.set('movies', movies(2, 'movies/2-b.duckdb'));
    const again = await f.run({ query: 'Title:star' });
    expect(again.cache).toBe('miss');
    expect(again.recordsJson).toContain('movies/2-b.duckdb');
  });

  it('cache: false neither reads nor writes the cache', async () => {
    const f = fixture();
    await f.run({ query: 'Title:star' });
    const bypass = await f.run({ query: 'Title:star' }, analyst, { cache: false });
    expect(bypass.cache).toBe('bypass');
    expect(f.searched).toHaveLength(2);
    expect((await f.run({ query: 'Genre:x' }, analyst, { cache: false })).cache).toBe('bypass');
    expect((await f.run({ query: 'Genre:x' })).cache).toBe('miss');
  });

  it('says bypass for every call when the cache is off (size 0)', async () => {
    const f = fixture(0);
    expect((await f.run({ query: 'Title:star' })).cache).toBe('bypass');
    expect((await f.run({ query: 'Title:star' })).cache).toBe('bypass');
    expect(f.searched).toHaveLength(2);
  });

  it('runs only misses under the heavy-call cap, and does not keep a failure', async () => {
    const f = fixture();
    let slots = 0;
    const heavy = <T>(work: () => Promise<T>) => {
      slots++;
      return work();
    };
    f.failNext();
    await expect(f.run({ query: 'Title:star' }, analyst, { heavy })).rejects.toThrow('engine failure');
    expect((await f.run({ query: 'Title:star' }, analyst, { heavy })).cache).toBe('miss');
    expect((await f.run({ query: 'Title:star' }, analyst, { heavy })).cache).toBe('hit');
    expect(slots).toBe(2);
  });
});

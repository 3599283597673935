import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { Reader } from '@quarry/query-language';
import { LruResultCache } from '@quarry/result-cache';
import type { SearchIndex } from '../ports/search-index.port';
import { ExecuteQueryUseCase, type ExecuteQueryInput } from './execute-query.use-case';

const entry: IndexEntry = {
  name: 'movies',
  description: '',
  fields: [{ name: 'Title', type: 'string' }],
  views: [],
  recordCount: 0,
  version: 1,
  snapshot: 'movies/1.duckdb',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const reader: Reader = { admin: false, indexes: ['movies'], realms: [] };
const huge = `h${'x'.repeat(900 * 1024)}`;

describe('ExecuteQueryUseCase refuses hostile sort items without echoing them', () => {
  let searched = 0;
  const catalog = { getIndex: async (name: string) => (name === entry.name ? entry : null) } as unknown as IndexCatalog;
  const search = {
    search: async () => {
      searched++;
      return { total: 0, records: [] };
    },
    forget: () => undefined,
  } as unknown as SearchIndex;
  const useCase = new ExecuteQueryUseCase(catalog, search, new LruResultCache(0), () => 0);

  const detailOf = (sort: ExecuteQueryInput['sort']) =>
    useCase.searchIndex(reader, { index: 'movies', query: '*', page: 1, pageSize: 50, sort }).then(
      () => 'resolved',
      (err: { code: string; detail: string }) => `${err.code}: ${err.detail}`,
    );
  const cut = `"h${'x'.repeat(99)}…" (${huge.length} characters)`;

  beforeEach(() => {
    searched = 0;
  });

  it('quotes a 900 KB unknown sort field cut to 100 characters, before any search', async () => {
    expect(
      await detailOf([
        { field: 'Title', direction: 'asc' },
        { field: huge, direction: 'asc' },
      ]),
    ).toBe(`INVALID_ARGUMENT: sort[1].field: unknown field ${cut}`);
    expect(searched).toBe(0);
  });

  // Directions arrive complete (asc or desc): the contract reads the spellings it accepts
  // (complete-params.test.ts), and the gRPC handler completes an older peer's with the same function.

  it('answers a 900 KB index name as an unknown index, cut short', async () => {
    const detail = await useCase.searchIndex(reader, { index: huge, query: '*', page: 1, pageSize: 50, sort: [] }).then(
      () => 'resolved',
      (err: { code: string; detail: string }) => `${err.code}: ${err.detail}`,
    );
    expect(detail).toBe(`NOT_FOUND: Index ${cut} not found`);
  });
});

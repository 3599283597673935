import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { Reader } from '@quarry/query-language';
import { readableIndex } from './index-access';

const movies = { name: 'movies' } as IndexEntry;

describe('readableIndex', () => {
  const asked: string[] = [];
  const catalog = {
    getIndex: async (name: string) => {
      asked.push(name);
      return name === 'movies' || name === 'flights' ? movies : null;
    },
  } as unknown as IndexCatalog;
  const reader: Reader = { admin: false, indexes: ['movies', 'nope'], realms: [] };
  const detailOf = (name: string) =>
    readableIndex(catalog, reader, name).then(
      () => 'resolved',
      (err: { code: string; detail: string }) => `${err.code}: ${err.detail}`,
    );

  beforeEach(() => (asked.length = 0));

  it('answers forbidden, unknown and impossible names alike', async () => {
    expect(await detailOf('flights')).toBe('NOT_FOUND: Index "flights" not found');
    expect(await detailOf('nope')).toBe('NOT_FOUND: Index "nope" not found');
    expect(await detailOf('no such/index')).toBe('NOT_FOUND: Index "no such/index" not found');
    expect(await readableIndex(catalog, reader, 'movies')).toBe(movies);
  });

  it('refuses a 900 KB name without asking the catalog, quoting 100 characters of it', async () => {
    const huge = 'm'.repeat(900 * 1024);
    expect(await detailOf(huge)).toBe(`NOT_FOUND: Index "${'m'.repeat(100)}…" (${huge.length} characters) not found`);
    expect(asked).toEqual([]);
  });
});

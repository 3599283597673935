import { restrictedQuery, type Reader } from './access';
import type { FieldDef } from './schema';

const fields: FieldDef[] = [
  { name: 'Genre', type: 'string' },
  { name: 'Year', type: 'integer' },
];
const opts = { fields, now: Date.UTC(2024, 0, 1) };
const reader = (realms: Reader['realms']): Reader => ({ admin: false, indexes: ['movies'], realms });

describe('restrictedQuery', () => {
  it('ANDs the realm around the user query, so nothing in the query escapes it', () => {
    expect(
      restrictedQuery(reader([{ index: 'movies', query: 'Genre:drama' }]), 'movies', 'Year:>2000 OR *', opts),
    ).toEqual({
      kind: 'match',
      fields: ['Genre'],
      words: ['drama'],
      prefix: false,
    });
  });

  it.each([' ', '', '\t'])('fails closed on a stored blank realm %j instead of reading it as "everything"', (blank) => {
    expect(() => restrictedQuery(reader([{ index: 'movies', query: blank }]), 'movies', '*', opts)).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN' }),
    );
    // Next to a real realm it must not cancel it either.
    expect(() =>
      restrictedQuery(
        reader([
          { index: 'movies', query: 'Genre:drama' },
          { index: 'movies', query: blank },
        ]),
        'movies',
        '*',
        opts,
      ),
    ).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  it('fails closed on a realm that no longer fits the index', () => {
    expect(() => restrictedQuery(reader([{ index: 'movies', query: 'Gone:x' }]), 'movies', '*', opts)).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN' }),
    );
  });
});

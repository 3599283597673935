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

// An embed token's realm (narrowing) is ANDed on top of the realms, for admins too.
describe('restrictedQuery with a narrowing', () => {
  const drama = { kind: 'match', fields: ['Genre'], words: ['drama'], prefix: false };
  const comedy = { kind: 'match', fields: ['Genre'], words: ['comedy'], prefix: false };

  it('ANDs the narrowing with the realms (ORed among themselves) and the query', () => {
    const r: Reader = {
      ...reader([
        { index: 'movies', query: 'Genre:drama' },
        { index: 'movies', query: 'Genre:comedy' },
      ]),
      narrowing: [{ index: 'movies', query: 'Genre:drama' }],
    };
    expect(restrictedQuery(r, 'movies', '*', opts)).toEqual({
      kind: 'and',
      children: [drama, { kind: 'or', children: [drama, comedy] }],
    });
  });

  it('applies to an admin, and a narrowing of "*" widens nothing', () => {
    const admin: Reader = {
      admin: true,
      indexes: [],
      realms: [],
      narrowing: [{ index: 'movies', query: 'Genre:comedy' }],
    };
    expect(restrictedQuery(admin, 'movies', '*', opts)).toEqual(comedy);
    const star: Reader = {
      ...reader([{ index: 'movies', query: 'Genre:drama' }]),
      narrowing: [{ index: 'movies', query: '*' }],
    };
    expect(restrictedQuery(star, 'movies', '*', opts)).toEqual(drama);
    // Another index's narrowing does not apply here.
    expect(
      restrictedQuery({ ...admin, narrowing: [{ index: 'other', query: 'Genre:comedy' }] }, 'movies', '*', opts),
    ).toEqual({
      kind: 'all',
    });
  });

  it('fails closed when the narrowing no longer fits the index', () => {
    const r: Reader = { admin: true, indexes: [], realms: [], narrowing: [{ index: 'movies', query: 'Gone:1' }] };
    expect(() => restrictedQuery(r, 'movies', '*', opts)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    const blank: Reader = { ...r, narrowing: [{ index: 'movies', query: ' ' }] };
    expect(() => restrictedQuery(blank, 'movies', '*', opts)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });
});

import { checkQuerySyntax } from '@quarry/query-language';
import { parseRealms, type RealmGrant } from './parse-realms';

const movies: RealmGrant = { indexes: ['movies', 'flights'], admin: false };

function refusal(values: string[], grant: RealmGrant = movies): string {
  try {
    parseRealms(values, grant);
  } catch (err) {
    return `${(err as { code: string }).code}: ${(err as { detail: string }).detail}`;
  }
  throw new Error(`accepted ${JSON.stringify(values).slice(0, 200)}`);
}

describe('parseRealms', () => {
  it('keeps valid realms, trimmed, several per index, with "=" allowed inside the query', () => {
    expect(
      parseRealms([' movies = (Major Genre):Drama ', 'movies=Major_Genre:Comedy', 'flights=origin:"A=B"'], movies),
    ).toEqual([
      { index: 'movies', query: '(Major Genre):Drama' },
      { index: 'movies', query: 'Major_Genre:Comedy' },
      { index: 'flights', query: 'origin:"A=B"' },
    ]);
    expect(parseRealms(['anything=x:1'], { indexes: ['*'], admin: false })).toEqual([
      { index: 'anything', query: 'x:1' },
    ]);
    expect(parseRealms([], { indexes: [], admin: true })).toEqual([]);
  });

  it.each(['movies=', 'movies= ', 'movies=\t \n'])(
    'refuses the blank realm %j, which would mean "no restriction"',
    (value) => {
      expect(refusal([value])).toBe(
        'INVALID_ARGUMENT: --realm for index "movies" has a blank query; a realm must say which rows the user may see',
      );
    },
  );

  it.each(['title:(drama', 'Major_Genre:Drama AND', ')', 'a:[1 TO', `${'('.repeat(100)}a${')'.repeat(100)}`])(
    "refuses the unparsable realm movies=%j with the query checker's own detail, naming the position",
    (query) => {
      let checker = '';
      try {
        checkQuerySyntax(query);
      } catch (err) {
        checker = (err as { detail: string }).detail;
      }
      expect(checker).toMatch(/position \d+/);
      expect(refusal([`movies=${query}`])).toBe(`INVALID_ARGUMENT: --realm for index "movies": ${checker}`);
    },
  );

  it('refuses a realm on an index the user is not given, or on an admin', () => {
    expect(refusal(['airports=state:CA'])).toBe(
      'INVALID_ARGUMENT: --realm names index "airports", which the user is not given (--indexes gives only "movies", "flights")',
    );
    expect(refusal(['movies=a'], { indexes: [], admin: false })).toBe(
      'INVALID_ARGUMENT: --realm names index "movies", which the user is not given (--indexes gives no index)',
    );
    // Index names match exactly, as permissions do.
    expect(refusal(['Movies=a'])).toContain('which the user is not given');
    expect(refusal(['movies=a'], { indexes: ['*'], admin: true })).toMatch(/no effect on an admin/);
  });

  it.each(['movies', '=Drama', ' =Drama', 'mo vies=a', '*=a', `${'m'.repeat(65)}=a`])(
    'refuses %j as not INDEX=QUERY',
    (value) => {
      expect(refusal([value], { indexes: ['*'], admin: false })).toMatch(
        /^INVALID_ARGUMENT: --realm must be INDEX=QUERY/,
      );
    },
  );

  it('refuses all realms when one is bad, and quotes a hostile one cut short', () => {
    expect(refusal(['movies=a:1', 'movies= '])).toContain('blank query');
    const huge = 'x'.repeat(900 * 1024);
    const detail = refusal([huge]);
    expect(detail).toBe(
      `INVALID_ARGUMENT: --realm must be INDEX=QUERY, got "${'x'.repeat(100)}…" (${huge.length} characters)`,
    );
  });
});

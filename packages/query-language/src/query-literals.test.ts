import { parseQuery } from './parse-query';
import { escapeQueryText, fieldPrefix } from './query-literals';
import type { FieldDef } from './schema';

const fields: FieldDef[] = [
  { name: 'Title', type: 'string' },
  { name: 'a field (x)', type: 'string' },
  { name: 'Year', type: 'integer' },
];
const opts = { fields, now: 0 };

describe('escapeQueryText', () => {
  // Each is text a value may hold that would be syntax if written as is.
  const hostile = [
    'a OR b',
    '*',
    'x" OR "y',
    "it's",
    '(a) AND (b)',
    'back\\slash\\',
    'Year:1999',
    'Title:*',
    'NOT x',
    '  padded\t\n',
    '=<>[]{}^~?&&||!+-/',
    'a:=b',
  ];
  it.each(hostile)('reads %j back as one exact text leaf', (text) => {
    const node = parseQuery(`${fieldPrefix('Title')}=${escapeQueryText(text)}`, opts);
    expect(node).toEqual({ kind: 'equals', field: 'Title', value: text });
  });

  // Without the `=`, an escaped value is still that text: never a wildcard, a comparison, an exact match
  // or every row (a realm filled from a token's claim is written so).
  it.each([...hostile, '>m', '<=z', '=acme', '@2020', 'acme*', '*acme', 'a?c'])(
    'reads %j after Field: as words of that text, or refuses it, never as anything wider',
    (text) => {
      let node: ReturnType<typeof parseQuery> | undefined;
      try {
        node = parseQuery(`${fieldPrefix('Title')}${escapeQueryText(text)}`, opts);
      } catch (err) {
        expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
        return;
      }
      expect(node).toMatchObject({ kind: 'match', fields: ['Title'], prefix: false });
    },
  );

  it('keeps a real trailing wildcard and comparison when nothing is escaped', () => {
    expect(parseQuery('Title:acme*', opts)).toMatchObject({ kind: 'match', prefix: true });
    expect(parseQuery('Title:*', opts)).toMatchObject({ kind: 'exists' });
    expect(parseQuery('Title:>m', opts)).toMatchObject({ kind: 'compare' });
  });

  it('names any field, spaces and parentheses included', () => {
    const node = parseQuery(`${fieldPrefix('a field (x)')}=v`, opts);
    expect(node).toEqual({ kind: 'equals', field: 'a field (x)', value: 'v' });
  });
});

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

  it('names any field, spaces and parentheses included', () => {
    const node = parseQuery(`${fieldPrefix('a field (x)')}=v`, opts);
    expect(node).toEqual({ kind: 'equals', field: 'a field (x)', value: 'v' });
  });
});

import { parseQuery } from './parse-query';
import { parseDeclaredType, type FieldDef } from './schema';

const fields: FieldDef[] = [
  { name: 'Title', type: 'string' },
  { name: 'Major Genre', type: 'string' },
  { name: 'Cost Total $', type: 'number' },
  { name: 'Year', type: 'integer' },
  { name: 'Released', type: 'date' },
  { name: 'Active', type: 'boolean' },
];
const NOW = Date.UTC(2024, 4, 15, 12, 30); // Wed 2024-05-15 12:30Z
const p = (q: string) => parseQuery(q, { fields, now: NOW });
const day = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d);

describe('parseQuery', () => {
  it('treats empty and * as everything', () => {
    expect(p('')).toEqual({ kind: 'all' });
    expect(p('  * ')).toEqual({ kind: 'all' });
  });

  it('matches bare words in every text field, lower-cased and split into words', () => {
    expect(p('Star')).toEqual({ kind: 'match', fields: ['Title', 'Major Genre'], words: ['star'], prefix: false });
    expect(p('"Star  Wars!"')).toEqual({ kind: 'match', fields: ['Title', 'Major Genre'], words: ['star', 'wars'], prefix: false });
    expect(p('sta*')).toMatchObject({ kind: 'match', words: ['sta'], prefix: true });
  });

  it('resolves fields case-insensitively and with spaces and symbols', () => {
    expect(p('title:wars')).toMatchObject({ kind: 'match', fields: ['Title'] });
    expect(p('(Major Genre):drama')).toMatchObject({ kind: 'match', fields: ['Major Genre'], words: ['drama'] });
    expect(p('(Cost Total $):>10')).toEqual({ kind: 'compare', field: 'Cost Total $', fieldType: 'number', op: 'gt', value: { type: 'number', value: 10 } });
    expect(p('Major\\ Genre:drama')).toMatchObject({ fields: ['Major Genre'] });
  });

  it('compiles ranges, comparisons, booleans and existence', () => {
    expect(p('Year:[1990 TO 2000}')).toEqual({
      kind: 'and',
      children: [
        { kind: 'compare', field: 'Year', fieldType: 'integer', op: 'gte', value: { type: 'number', value: 1990 } },
        { kind: 'compare', field: 'Year', fieldType: 'integer', op: 'lt', value: { type: 'number', value: 2000 } },
      ],
    });
    expect(p('Year:[* TO 5]')).toMatchObject({ op: 'lte' });
    expect(p('Active:TRUE')).toMatchObject({ op: 'eq', value: { type: 'boolean', value: true } });
    expect(p('Title:*')).toEqual({ kind: 'exists', field: 'Title', fieldType: 'string' });
  });

  it('turns day-precision dates and tokens into whole-day bounds', () => {
    expect(p('Released:2001-01-14')).toMatchObject({
      kind: 'and',
      children: [{ op: 'gte', value: { value: day(2001, 1, 14) } }, { op: 'lt', value: { value: day(2001, 1, 15) } }],
    });
    expect(p('Released:[TODAY-7DAYS TO TODAY]')).toMatchObject({
      children: [{ op: 'gte', value: { value: day(2024, 5, 8) } }, { op: 'lt', value: { value: day(2024, 5, 16) } }],
    });
    expect(p('Released:>=FIRST_DAY_OF_MONTH')).toMatchObject({ op: 'gte', value: { value: day(2024, 5, 1) } });
    expect(p('Released:<=LAST_DAY_OF_YEAR')).toMatchObject({ op: 'lt', value: { value: day(2025, 1, 1) } });
    expect(p('Released:<NOW')).toMatchObject({ op: 'lt', value: { value: NOW } });
    expect(p('Released:2001')).toMatchObject({ children: [{ value: { value: day(2001, 1, 1) } }, { value: { value: day(2002, 1, 1) } }] });
  });

  it('applies NOT > AND > OR whatever the grammar nests', () => {
    const q = p('Title:a AND Title:b OR Title:c');
    expect(q.kind).toBe('or');
    expect(q).toMatchObject({ children: [{ kind: 'and' }, { kind: 'match', words: ['c'] }] });
    expect(p('NOT Title:a')).toMatchObject({ kind: 'not', child: { words: ['a'] } });
    expect(p('-Title:a Title:b')).toMatchObject({ kind: 'and', children: [{ kind: 'not' }, { kind: 'match' }] });
    expect(p('Title:a OR NOT Title:b')).toMatchObject({ kind: 'or', children: [{ kind: 'match' }, { kind: 'not' }] });
    expect(p('+Title:a +Title:b')).toMatchObject({ kind: 'and' });
    expect(p('-(Title:a OR Title:b) Title:c')).toMatchObject({ kind: 'and', children: [{ kind: 'not', child: { kind: 'or' } }, { kind: 'match' }] });
    expect(p('-Year:[1 TO 2]')).toMatchObject({ kind: 'not', child: { kind: 'and' } });
    expect(p('Title:(a OR b)')).toMatchObject({ kind: 'or', children: [{ fields: ['Title'] }, { fields: ['Title'] }] });
  });

  it.each([
    ['Year:abc', /Type mismatch at position 6: field "Year" is a number, but "abc" is not/],
    ['Released:yesterdayish', /is a date/],
    ['Active:maybe', /is a boolean/],
    ['Nope:x', /Unknown field "Nope" at position 1/],
    ['Title:a AND (Nope:x)', /Unknown field "Nope" at position 14/],
    ['Title:(a', /Query syntax error at position/],
    ['Title:a AND', /nothing follows AND/],
    [') OR (*', /Query syntax error at position 1/],
    ['f*o', /Wildcards are only supported at the end/],
    ['Title:/re/', /Regular expressions/],
    ['foo~', /Fuzzy/],
    ['[1 TO 2]', /A range needs a field/],
    ['(' .repeat(200) + 'a' + ')'.repeat(200), /nest deeper than 64/],
  ])('refuses %s with a clear 400', (q, msg) => {
    expect(() => p(q)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', detail: expect.stringMatching(msg) }));
  });
});

describe('parseDeclaredType', () => {
  it('reads types and date grains', () => {
    expect(parseDeclaredType('date:month')).toEqual({ type: 'date', grain: 'month' });
    expect(parseDeclaredType('integer')).toEqual({ type: 'integer' });
    expect(parseDeclaredType('integer:month')).toBeNull();
    expect(parseDeclaredType('text')).toBeNull();
  });
});

import { checkQuerySyntax, parseQuery } from './parse-query';
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

  it('reads *:* as everything wherever it stands, not as a field named *', () => {
    expect(p('* OR *:*')).toEqual({ kind: 'all' });
    expect(p('*:* AND Year:5')).toEqual(p('Year:5'));
    expect(p('NOT *:*')).toEqual({ kind: 'none' });
    expect(() => p('*:foo')).toThrow(/Unknown field "\*"/);
  });

  it('keeps an escaped blank at the end of the query as part of the value', () => {
    expect(p('Title:=alpha\\ ')).toEqual({ kind: 'equals', field: 'Title', value: 'alpha ' });
    expect(p('Year:5 AND Title:=alpha\\ ')).toMatchObject({ kind: 'and', children: [{}, { value: 'alpha ' }] });
    expect(p('Title:=alpha\\  \t')).toEqual({ kind: 'equals', field: 'Title', value: 'alpha ' });
    // Every blank escapes, so a key holding a line feed or a tab can be written; other spaces are word characters.
    expect(p('Title:=a\\\tb\\\n')).toEqual({ kind: 'equals', field: 'Title', value: 'a\tb\n' });
    expect(p('Title:=alpha\u00a0')).toEqual({ kind: 'equals', field: 'Title', value: 'alpha\u00a0' });
    // An even run of backslashes escapes itself: the blank after it is the margin.
    expect(p('Title:=alpha\\\\ ')).toEqual({ kind: 'equals', field: 'Title', value: 'alpha\\' });
  });

  it('matches bare words in every text field, lower-cased and split into words', () => {
    expect(p('Star')).toEqual({ kind: 'match', fields: ['Title', 'Major Genre'], words: ['star'], prefix: false });
    expect(p('"Star  Wars!"')).toEqual({
      kind: 'match',
      fields: ['Title', 'Major Genre'],
      words: ['star', 'wars'],
      prefix: false,
    });
    expect(p('sta*')).toMatchObject({ kind: 'match', words: ['sta'], prefix: true });
  });

  it('resolves fields case-insensitively and with spaces and symbols', () => {
    expect(p('title:wars')).toMatchObject({ kind: 'match', fields: ['Title'] });
    expect(p('(Major Genre):drama')).toMatchObject({ kind: 'match', fields: ['Major Genre'], words: ['drama'] });
    expect(p('(Cost Total $):>10')).toEqual({
      kind: 'compare',
      field: 'Cost Total $',
      fieldType: 'number',
      op: 'gt',
      value: { type: 'number', value: 10 },
    });
    expect(p('Major\\ Genre:drama')).toMatchObject({ fields: ['Major Genre'] });
  });

  it('compiles ranges, comparisons, booleans and existence', () => {
    expect(p('Year:[1990 TO 2000}')).toEqual({
      kind: 'and',
      children: [
        { kind: 'compare', field: 'Year', fieldType: 'integer', op: 'gte', value: { type: 'number', value: 1990 } },
        // A range adds 1 to a score once: its second comparison weighs nothing.
        {
          kind: 'compare',
          field: 'Year',
          fieldType: 'integer',
          op: 'lt',
          value: { type: 'number', value: 2000 },
          boost: 0,
        },
      ],
    });
    expect(p('Year:[* TO 5]')).toMatchObject({ op: 'lte' });
    expect(p('Active:TRUE')).toMatchObject({ op: 'eq', value: { type: 'boolean', value: true } });
    expect(p('Title:*')).toEqual({ kind: 'exists', field: 'Title', fieldType: 'string' });
  });

  it('turns day-precision dates and tokens into whole-day bounds', () => {
    expect(p('Released:2001-01-14')).toMatchObject({
      kind: 'and',
      children: [
        { op: 'gte', value: { value: day(2001, 1, 14) } },
        { op: 'lt', value: { value: day(2001, 1, 15) } },
      ],
    });
    expect(p('Released:[TODAY-7DAYS TO TODAY]')).toMatchObject({
      children: [
        { op: 'gte', value: { value: day(2024, 5, 8) } },
        { op: 'lt', value: { value: day(2024, 5, 16) } },
      ],
    });
    expect(p('Released:>=FIRST_DAY_OF_MONTH')).toMatchObject({ op: 'gte', value: { value: day(2024, 5, 1) } });
    expect(p('Released:<=LAST_DAY_OF_YEAR')).toMatchObject({ op: 'lt', value: { value: day(2025, 1, 1) } });
    expect(p('Released:<NOW')).toMatchObject({ op: 'lt', value: { value: NOW } });
    expect(p('Released:2001')).toMatchObject({
      children: [{ value: { value: day(2001, 1, 1) } }, { value: { value: day(2002, 1, 1) } }],
    });
  });

  it('applies NOT > AND > OR whatever the grammar nests', () => {
    const q = p('Title:a AND Title:b OR Title:c');
    expect(q.kind).toBe('or');
    expect(q).toMatchObject({ children: [{ kind: 'and' }, { kind: 'match', words: ['c'] }] });
    expect(p('NOT Title:a')).toMatchObject({ kind: 'not', child: { words: ['a'] } });
    expect(p('-Title:a Title:b')).toMatchObject({ kind: 'and', children: [{ kind: 'not' }, { kind: 'match' }] });
    expect(p('Title:a OR NOT Title:b')).toMatchObject({ kind: 'or', children: [{ kind: 'match' }, { kind: 'not' }] });
    expect(p('+Title:a +Title:b')).toMatchObject({ kind: 'and' });
    expect(p('-(Title:a OR Title:b) Title:c')).toMatchObject({
      kind: 'and',
      children: [{ kind: 'not', child: { kind: 'or' } }, { kind: 'match' }],
    });
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
    ['foo~3', /at most 2 edits/],
    ['Year:1995~1', /searches text, but field "Year" is an integer/],
    ['foo*~1', /plain word/],
    ['"foo bar"~1', /Proximity/],
    ['foo-bar~1', /must be one word; "foo-bar" holds 2/],
    ['[1 TO 2]', /A range needs a field/],
    ['('.repeat(200) + 'a' + ')'.repeat(200), /nest deeper than 32/],
  ])('refuses %s with a clear 400', (q, msg) => {
    expect(() => p(q)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', detail: expect.stringMatching(msg) }),
    );
  });
});

describe('parseQuery: exact values (Field:=value)', () => {
  it('on text: the whole stored value, case and all, with escapes for blanks and symbols', () => {
    expect(p('Title:=Star')).toEqual({ kind: 'equals', field: 'Title', value: 'Star' });
    expect(p('(Major Genre):=Black\\ Comedy')).toEqual({ kind: 'equals', field: 'Major Genre', value: 'Black Comedy' });
    expect(p('Title:=\\-x\\:\\(y\\)\\=')).toEqual({ kind: 'equals', field: 'Title', value: '-x:(y)=' });
    expect(p('NOT Title:=Star')).toEqual({ kind: 'not', child: { kind: 'equals', field: 'Title', value: 'Star' } });
  });

  it('on numbers, dates and booleans it is the equality ":" already means', () => {
    expect(p('Year:=1990')).toEqual(p('Year:1990'));
    expect(p('Released:=2001-01-14')).toEqual(p('Released:2001-01-14'));
    expect(p('Active:=true')).toEqual(p('Active:true'));
  });

  it('without a value, or without a field, is not an exact match', () => {
    expect(() => p('Year:=abc')).toThrow(/Type mismatch/);
    // A bare "=x" has no field: it is searched as a word, as before.
    expect(p('=Star')).toMatchObject({ kind: 'match', words: ['star'] });
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

const refusal = (detail: string | RegExp) =>
  expect.objectContaining({
    code: 'INVALID_ARGUMENT',
    detail: typeof detail === 'string' ? detail : expect.stringMatching(detail),
  });
const title = (w: string) => ({ kind: 'match', fields: ['Title'], words: [w], prefix: false });

describe('parseQuery: operators', () => {
  it('negates with every spelling of NOT, wherever it stands', () => {
    const aNotB = { kind: 'and', children: [title('a'), { kind: 'not', child: title('b') }] };
    for (const q of [
      'Title:a NOT Title:b',
      'Title:a AND NOT Title:b',
      'Title:a AND  NOT Title:b',
      'Title:a && NOT Title:b',
      'Title:a\nAND\tNOT Title:b',
      'Title:a -Title:b',
      'Title:a -(Title:b)',
      'Title:a !Title:b',
      'Title:a NOT(Title:b)',
    ]) {
      expect({ q, node: p(q) }).toEqual({ q, node: aNotB });
    }
    expect(p('Title:a OR NOT Title:b')).toEqual({
      kind: 'or',
      children: [title('a'), { kind: 'not', child: title('b') }],
    });
    expect(p('Title:a || !Title:b')).toEqual({
      kind: 'or',
      children: [title('a'), { kind: 'not', child: title('b') }],
    });
  });

  it('cancels NOTs in pairs and ignores a leading AND or OR', () => {
    expect(p('NOT NOT Title:a')).toEqual(title('a'));
    expect(p('Title:a NOT NOT Title:b')).toEqual({ kind: 'and', children: [title('a'), title('b')] });
    expect(p('NOT -Title:a')).toEqual(title('a'));
    expect(p('AND Title:a')).toEqual(title('a'));
    expect(p('OR NOT Title:a')).toEqual({ kind: 'not', child: title('a') });
    expect(p('(OR Title:a)')).toEqual(title('a'));
  });

  it('takes the first operator between two terms for AND or OR, as it always did', () => {
    expect(p('Title:a OR AND Title:b')).toMatchObject({ kind: 'or' });
    expect(p('Title:a AND OR Title:b')).toMatchObject({ kind: 'and' });
  });

  it('refuses an operator with nothing after it, at the operator', () => {
    expect(() => p('Title:a AND')).toThrow(refusal('Query syntax error at position 9: nothing follows AND'));
    expect(() => p('(Title:a OR) Title:b')).toThrow(refusal('Query syntax error at position 10: nothing follows OR'));
    expect(() => p('(Title:a)&&')).toThrow(refusal('Query syntax error at position 10: nothing follows &&'));
    expect(() => p('NOT')).toThrow(refusal('Query syntax error at position 1: nothing follows NOT'));
    expect(() => p('Title: AND')).toThrow(refusal('Query syntax error at position 8: nothing follows AND'));
  });

  it('reads an operator word right after a field name as the value', () => {
    expect(p('Title:AND')).toEqual(title('and'));
    expect(p('Title: OR Title:b')).toEqual({ kind: 'and', children: [title('or'), title('b')] });
  });

  it('treats lower-case operators and glued ones as words', () => {
    expect(p('Title:(a and b)')).toEqual({ kind: 'and', children: [title('a'), title('and'), title('b')] });
    expect(p('Title:(ANDa)')).toEqual(title('anda'));
  });
});

describe('parseQuery: signs and fields', () => {
  it('counts a sign on the field and one on the value', () => {
    expect(p('-Title:-a')).toEqual(title('a'));
    expect(p('+Title:-a')).toEqual({ kind: 'not', child: title('a') });
    expect(p('!Title:a')).toEqual({ kind: 'not', child: title('a') });
    expect(p('-(Major Genre):drama')).toMatchObject({ kind: 'not', child: { fields: ['Major Genre'] } });
  });

  it('negates a signed field group, and lets nested groups inherit the field', () => {
    expect(p('-Title:(a b)')).toEqual({ kind: 'not', child: { kind: 'and', children: [title('a'), title('b')] } });
    expect(p('Title:-(a)')).toEqual({ kind: 'not', child: title('a') });
    expect(p('Title:(a (b OR Year:1))')).toEqual({
      kind: 'and',
      children: [
        title('a'),
        {
          kind: 'or',
          children: [
            title('b'),
            { kind: 'compare', field: 'Year', fieldType: 'integer', op: 'eq', value: { type: 'number', value: 1 } },
          ],
        },
      ],
    });
    expect(p('Year:([1 TO 2] OR >5)')).toMatchObject({ kind: 'or', children: [{ kind: 'and' }, { op: 'gt' }] });
  });

  it('names an unknown field where it is written, also for a group and after blanks', () => {
    expect(() => p('Title:a Nope:(x y)')).toThrow(refusal('Unknown field "Nope" at position 9'));
    expect(() => p('   Nope:x')).toThrow(refusal('Unknown field "Nope" at position 4'));
    expect(() => p('Title:a (No Such):x')).toThrow(refusal('Unknown field "No Such" at position 10'));
    // Only what the group holds is resolved: an explicit field inside wins.
    expect(p('Nope:(Title:a)')).toEqual(title('a'));
  });

  it('puts boosts on the leaves they weigh and takes "a b"~0 as the phrase', () => {
    expect(p('Title:a^2')).toEqual({ ...p('Title:a'), boost: 2 });
    expect(p('Title:a^1.5 OR Title:b^0.5')).toEqual({
      kind: 'or',
      children: [
        { ...p('Title:a'), boost: 1.5 },
        { ...p('Title:b'), boost: 0.5 },
      ],
    });
    expect(p('Title:"a b"~0')).toEqual(p('Title:"a b"'));
    expect(p('Title:a~1')).toEqual({ ...p('Title:a'), fuzzy: 1 });
    expect(p('Title:a~0')).toEqual(p('Title:a'));
  });

  it('refuses a range or a comparison without a field, naming where it is', () => {
    expect(() => p('Title:a [1 TO 2]')).toThrow(
      refusal('A range needs a field, as in Year:[1990 TO 2000] (position 9)'),
    );
    expect(() => p('Title:a >5')).toThrow(refusal('A comparison needs a field, as in "Field:>5" (position 9)'));
  });

  it('names the range bound that does not fit the field', () => {
    expect(() => p('Year:[1 TO x]')).toThrow(
      refusal('Type mismatch at position 12: field "Year" is a number, but "x" is not'),
    );
  });
});

describe('parseQuery: values the engines cannot hold', () => {
  it.each([
    ['Year:1e999', 'Number "1e999" at position 6 is outside the supported range'],
    ['Year:>-1e400', 'Number "-1e400" at position 6 is outside the supported range'],
    ['Year:[1 TO 1e999]', 'Number "1e999" at position 12 is outside the supported range'],
    [
      '(Cost Total $):' + '9'.repeat(400),
      /^Number "9{100}…" \(400 characters\) at position 16 is outside the supported range$/,
    ],
    [
      'Released:[NOW-99999999999YEARS TO NOW]',
      'Date "NOW-99999999999YEARS" at position 11 is outside the supported range (years 1-9999)',
    ],
    [
      'Released:NOW+9999999999999999999999DAYS',
      'Date "NOW+9999999999999999999999DAYS" at position 10 is outside the supported range (years 1-9999)',
    ],
    ['Released:>0000-01-01', 'Date "0000-01-01" at position 10 is outside the supported range (years 1-9999)'],
  ])('refuses %s', (q, detail) => {
    expect(() => p(q)).toThrow(refusal(detail));
  });

  it('keeps tiny numbers and the first and last supported days', () => {
    expect(p('Year:1e-999')).toMatchObject({ value: { type: 'number', value: 0 } });
    expect(p('Released:[0001-01-01 TO 9999-12-31]')).toMatchObject({
      kind: 'and',
      children: [
        { op: 'gte', value: { value: Date.parse('0001-01-01T00:00:00Z') } },
        { op: 'lt', value: { value: Date.parse('+010000-01-01T00:00:00Z') } },
      ],
    });
  });
});

describe('parseQuery: details quote user text cut to 100 characters', () => {
  const huge = 'x'.repeat(900 * 1024);

  it.each([
    ['an unknown field of 900 KB', `${huge}:a`, /^Unknown field "x{100}…" \(921600 characters\) at position 1$/],
    [
      'a type mismatch',
      `Year:${huge}`,
      /^Type mismatch at position 6: field "Year" is a number, but "x{100}…" \(921600 characters\) is not$/,
    ],
    [
      'a value with nothing to search for',
      `Title:"${'!'.repeat(5000)}"`,
      /^"!{100}…" \(5000 characters\) has no letters or digits to search for \(position 7\)$/,
    ],
    [
      'a field name where a value belongs',
      `${huge}:Title:a`,
      /^Query syntax error at position 921602: a value must follow "x{100}…" \(921601 characters\)$/,
    ],
    [
      'a comparison without a field',
      `>${huge}`,
      /^A comparison needs a field, as in "Field:>x{93}…" \(921607 characters\) \(position 1\)$/,
    ],
  ])('%s', (_what, q, detail) => {
    let thrown: unknown;
    try {
      p(q);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toEqual(refusal(detail));
    expect((thrown as { detail: string }).detail.length).toBeLessThan(200);
  });
});

describe('checkQuerySyntax', () => {
  it.each([
    'origin:(SFO OR LAX OR SEA)',
    'Unknown\\ Field:[1 TO 2] AND (Any Name):>=NOW-7DAYS',
    '*',
    '*:*',
    'Year:>5 -Active:true',
    'NOT (Major Genre):drama',
  ])('accepts %s without knowing the fields', (q) => {
    expect(() => checkQuerySyntax(q)).not.toThrow();
  });

  it.each([
    ['', 'Query syntax error at position 1: the query is blank'],
    [' \t\n ', 'Query syntax error at position 1: the query is blank'],
    ['origin:(SFO OR', 'Query syntax error at position 8: "(" is never closed'],
    ['a AND', 'Query syntax error at position 3: nothing follows AND'],
    [') OR (*', 'Query syntax error at position 1: ")" has no matching "("'],
    ['origin:/SF./', 'Regular expressions are not supported (position 8)'],
    ['origin:SFO~5', 'A fuzzy word allows at most 2 edits, not 5 (position 8)'],
    ['[1 TO 2]', 'A range needs a field, as in Year:[1990 TO 2000] (position 1)'],
    ['origin:S*O', 'Wildcards are only supported at the end of a word, as in foo* (position 8)'],
    ['origin:"!!"', '"!!" has no letters or digits to search for (position 8)'],
  ])('refuses %j naming the position', (q, detail) => {
    expect(() => checkQuerySyntax(q)).toThrow(refusal(detail));
  });
});

describe('the clause limit', () => {
  it('counts a bare word once per text field and refuses more than 1024 field tests', () => {
    // 2 text fields: 512 bare words are 1024 tests, 513 are one too many.
    expect(() => p(Array.from({ length: 512 }, (_, i) => `w${i}`).join(' OR '))).not.toThrow();
    expect(() => p(Array.from({ length: 513 }, (_, i) => `w${i}`).join(' OR '))).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        detail: expect.stringMatching(/needs 1026 field tests.*at most 1024/),
      }),
    );
    // Named fields count once each.
    expect(() => p(Array.from({ length: 1024 }, (_, i) => `Title:w${i}`).join(' OR '))).not.toThrow();
    expect(() => p(Array.from({ length: 1025 }, (_, i) => `Title:w${i}`).join(' OR '))).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

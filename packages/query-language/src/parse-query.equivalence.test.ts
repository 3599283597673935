import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  LEGACY_DIFFERENCES,
  legacyDifferenceOf,
  lexForClassification,
  type Outcome,
} from '../test-support/legacy-differences.oracle';
import { legacyParseQuery } from '../test-support/legacy-lucene-parser.oracle';
import { parseQuery } from './parse-query';
import type { FieldDef } from './schema';

/**
 * The hand-written parser against the lucene-based one it replaced (kept as a test-only oracle): the
 * same QueryNode, or both refusing, for every query string in the repository's tests, for generated
 * queries of the grammar, and for random token soup. The deliberate differences are listed, with why, in
 * legacy-differences.oracle.ts; a disagreement outside that list fails here.
 */

// The fields of every index the tests use, so that their queries compile rather than stop at an unknown field.
const FIELDS: FieldDef[] = [
  { name: 'Title', type: 'string' },
  { name: 'Major Genre', type: 'string' },
  { name: 'MPAA Rating', type: 'string' },
  { name: 'Director', type: 'string' },
  { name: 'Creative Type', type: 'string' },
  { name: 'IMDB Rating', type: 'number' },
  { name: 'US Gross', type: 'number' },
  { name: 'Running Time min', type: 'integer' },
  { name: 'Release Date', type: 'date' },
  { name: 'origin', type: 'string' },
  { name: 'destination', type: 'string' },
  { name: 'date', type: 'date' },
  { name: 'delay', type: 'integer' },
  { name: 'name', type: 'string' },
  { name: 'in stock', type: 'boolean' },
  { name: 'Cost Total $', type: 'number' },
  { name: 'added', type: 'date' },
  { name: 'Year', type: 'integer' },
  { name: 'Released', type: 'date' },
  { name: 'Active', type: 'boolean' },
];
const NOW = Date.UTC(2024, 4, 15, 12, 30);

function outcome(parse: typeof parseQuery, query: string): Outcome {
  try {
    // Boosts only weigh scores (the old parser read and dropped them): what is compared is what matches.
    const matching = (key: string, v: unknown) => (key === 'boost' ? undefined : v);
    return { ok: true, value: JSON.stringify(parse(query, { fields: FIELDS, now: NOW }), matching) };
  } catch (err) {
    return { ok: false, value: String((err as { detail?: unknown }).detail ?? err) };
  }
}

interface Comparison {
  query: string;
  legacy: Outcome;
  current: Outcome;
  same: boolean;
}

function compare(query: string): Comparison {
  const legacy = outcome(legacyParseQuery, query);
  const current = outcome(parseQuery, query);
  return { query, legacy, current, same: legacy.ok === current.ok && (!legacy.ok || legacy.value === current.value) };
}

const describe_ = (c: Comparison) => `${JSON.stringify(c.query)}\n  old: ${c.legacy.value}\n  new: ${c.current.value}`;

/** The query agrees, or shows one of the listed differences. */
function expectEquivalent(query: string): void {
  const c = compare(query);
  if (c.same) return;
  const difference = legacyDifferenceOf(query, c.legacy, c.current);
  if (!difference) throw new Error(`Unlisted difference from the lucene-based parser:\n${describe_(c)}`);
}

/** Every string literal of a TypeScript file (template literals aside), decoded. */
function stringLiterals(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"/g)) {
    const body = m[1] ?? m[2];
    out.push(
      body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, e: string) => {
        if (e[0] === 'u') return String.fromCodePoint(parseInt(e.replace(/[u{}]/g, ''), 16));
        if (e[0] === 'x' && e.length === 3) return String.fromCharCode(parseInt(e.slice(1), 16));
        return ({ n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', b: '\b', '0': '\0' } as Record<string, string>)[e] ?? e;
      }),
    );
  }
  return out;
}

const ROOT = join(__dirname, '..', '..', '..');
const corpusFiles = [
  ...readdirSync(join(ROOT, 'tests'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(ROOT, 'tests', f)),
  ...readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join(__dirname, f)),
];
// The old parser is exponential in nesting: long or deeply nested strings are left to the fuzz test.
const corpus = [...new Set(corpusFiles.flatMap((f) => stringLiterals(readFileSync(f, 'utf8'))))].filter(
  (s) => s.length <= 300 && (s.match(/[([{]/g) ?? []).length <= 8,
);

describe('the hand-written parser against the lucene-based one', () => {
  it('reads the query strings of the test suites', () => {
    expect(corpus.length).toBeGreaterThan(300);
    // Queries of the e2e tests, the realm test and this package's tests are all in.
    expect(corpus).toEqual(
      expect.arrayContaining([
        'origin:(SFO OR LAX OR SEA)',
        '(Release Date):[1995-01-01 TO 1995-12-31]',
        ') OR (*',
        'Title:a AND (Nope:x)',
      ]),
    );
  });

  it('agrees on every string literal of tests/ and of this package tests, or shows a listed difference', () => {
    const unlisted = corpus.map(compare).filter((c) => !c.same && !legacyDifferenceOf(c.query, c.legacy, c.current));
    expect(unlisted.map(describe_)).toEqual([]);
  });

  it('agrees exactly on the e2e queries', () => {
    const e2e = [
      '(MPAA Rating):(G OR PG OR R OR "PG-13") AND (Major Genre):(Action OR Adventure OR Comedy OR Drama OR Horror OR Musical)',
      '(Major Genre):drama AND (IMDB Rating):>7',
      'origin:(SFO OR SEA) AND date:<2001-01-04',
      '(IMDB Rating):{8 TO 9}',
      'delay:[* TO -10]',
      'date:{2001-03-30 TO *]',
      '-Director:*',
      'war -Title:star',
      '(Major Genre):horror OR (Major Genre):western AND (IMDB Rating):>7',
      'Title:* OR NOT Title:*',
      '*:*',
      'NOT (Major Genre):drama',
      '") OR TRUE OR ("',
      '(in stock):true',
      'added:<FIRST_DAY_OF_YEAR-1YEARS',
    ];
    for (const q of e2e) {
      const c = compare(q);
      expect({ q, same: c.same, ok: c.current.ok }).toEqual({ q, same: true, ok: true });
    }
  });

  it('agrees exactly on generated queries of the grammar', () => {
    let accepted = 0;
    fc.assert(
      fc.property(grammarQuery, (query) => {
        const c = compare(query);
        // The grammar writes `word~`, which the old parser refused: now a fuzzy word (a listed difference).
        if (!c.same && legacyDifferenceOf(query, c.legacy, c.current)?.name !== 'fuzzy words')
          throw new Error(describe_(c));
        if (c.current.ok) accepted++;
      }),
      { numRuns: 3000 },
    );
    // Most generated queries must compile: agreeing only on refusals would prove little.
    expect(accepted).toBeGreaterThan(1500);
  });

  it('agrees on random token soup, or shows a listed difference', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...SOUP), { maxLength: 10 }), (parts) => {
        const query = parts.join('');
        // Keeps the old parser away from its exponential cases.
        fc.pre((query.match(/[([{]/g) ?? []).length <= 4);
        expectEquivalent(query);
      }),
      { numRuns: 20000 },
    );
  });

  describe.each(LEGACY_DIFFERENCES.map((d) => [d.name, d] as const))('deliberate difference: %s', (_name, d) => {
    it(`${d.example} — ${d.why}`, () => {
      const c = compare(d.example);
      expect(c.same).toBe(false);
      expect(d.applies(d.example, lexForClassification(d.example), c.legacy, c.current)).toBe(true);
    });
  });

  // What the new parser makes of the examples above (the old results are the bugs described there).
  it.each([
    [
      'Title:a NOT Title:b',
      {
        kind: 'and',
        children: [
          { kind: 'match', words: ['a'] },
          { kind: 'not', child: { words: ['b'] } },
        ],
      },
    ],
    ['Title:a AND  NOT Title:b', { kind: 'and', children: [{ kind: 'match' }, { kind: 'not' }] }],
    [
      'Title:c -(Title:a)',
      {
        kind: 'and',
        children: [
          { kind: 'match', words: ['c'] },
          { kind: 'not', child: { words: ['a'] } },
        ],
      },
    ],
    ['NOT NOT Title:a', { kind: 'match', words: ['a'] }],
    ['AND OR Title:a', { kind: 'match', words: ['a'] }],
    ['Title:a OR(Title:b)', { kind: 'or' }],
    ['NOT(Title:a)', { kind: 'not', child: { words: ['a'] } }],
    ['Title:a AND NOTb', { kind: 'and', children: [{ words: ['a'] }, { words: ['notb'] }] }],
    ['!Title:a', { kind: 'not', child: { fields: ['Title'] } }],
    ['!(Title:a)', { kind: 'not' }],
    ['-Title:-a', { kind: 'match', fields: ['Title'], words: ['a'] }],
    ['+Title:-a', { kind: 'not', child: { fields: ['Title'] } }],
    ['-Title:(a b)', { kind: 'not', child: { kind: 'and' } }],
    ['Title:-(a)', { kind: 'not', child: { fields: ['Title'] } }],
    ['"x"-(Title:a)', { kind: 'and', children: [{ words: ['x'] }, { kind: 'not' }] }],
    ['Title:a^1.5', { kind: 'match', fields: ['Title'], words: ['a'] }],
    ['x(Title):a', { kind: 'and', children: [{ words: ['x'] }, { fields: ['Title'], words: ['a'] }] }],
    ['"a\\b"', { kind: 'match', words: ['a', 'b'] }],
    ['x\\ OR', { kind: 'match', words: ['x', 'or'] }],
  ])('now reads %s as it says', (query, expected) => {
    expect(parseQuery(query, { fields: FIELDS, now: NOW })).toMatchObject(expected);
  });

  it.each([
    ['(Title:a AND )', /position 10: nothing follows AND/],
    ['(Title:a)AND', /position 10: nothing follows AND/],
    ['Year:1e999', /Number "1e999" at position 6 is outside the supported range/],
  ])('now refuses %s', (query, detail) => {
    expect(() => parseQuery(query, { fields: FIELDS, now: NOW })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', detail: expect.stringMatching(detail) }),
    );
  });
});

// ---- Generated queries of the grammar, avoiding exactly the constructs listed as differences. ----

const blanks = fc.constantFrom(' ', '  ', '\t', '\n', ' \n ');
/** Mostly valid pieces, sometimes one each parser must refuse. */
const mostly = (valid: readonly string[], invalid: readonly string[]) =>
  fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });
const plainWord = mostly(
  [
    'star',
    'Wars',
    'a',
    'b1',
    'x-y',
    "don't",
    "don\\'t",
    'Año',
    '2001',
    '1.5',
    'xNOT',
    'and',
    'or',
    'TO',
    'foo*',
    'sta*',
    '*',
    // `\\*` (every record to the old parser, the text "*" now) is a listed difference: in the soup below.
    'C\\:\\\\x',
    'a\\ b',
    'é',
    '&x',
    'a&&b',
    'a.b',
    'x\\(y\\)',
  ],
  ['f*o', 'x?', '-', '...', 'foo~', 'foo~0.8', '/re/', '>5'],
);
const signed = (arb: fc.Arbitrary<string>) => fc.tuple(fc.constantFrom('', '', '-', '+'), arb).map(([s, w]) => s + w);
const modifiers = fc.constantFrom('', '', '', '^2', '^0.5', '^10');
const wordTerm = fc.tuple(signed(plainWord), modifiers).map(([w, m]) => (/[~/]|^[-+]$/.test(w) ? w : w + m));
const phrase = fc
  .tuple(
    mostly(
      ['"a b"', '"Star  Wars!"', '"x\\"y"', '"AND"', '"2001-01-14"', '"true"', '"(a OR b)"'],
      ['""', '"-"', '"a b"~2', '"*"'],
    ),
    fc.constantFrom('', '', '^2', '~0'),
  )
  .map(([p, m]) => (p.includes('~') ? p : p + m));

const valuesByField: Record<string, [string[], string[]]> = {
  Title: [
    [
      'wars',
      'Star',
      'sta*',
      '*',
      '>m',
      '[a TO m]',
      '[\\* TO m]',
      '{a:b TO *]',
      '"star wars"',
      '-wars',
      '+wars',
      '"a b"^2',
      'AND',
      '"AND"',
    ],
    ['?x', '-'],
  ],
  'Major Genre': [['drama', '"Black Comedy"', '*', 'com*'], ['!!']],
  Year: [
    ['1990', '-5', '1.5', '>=10', '<3', '[1 TO 5]', '{1 TO *]', '[* TO 5}', '[* TO *]', '1e3', '"1990"', '<=2001', '*'],
    ['abc', '"\\-5"', '[\\* TO 5]'],
  ],
  Released: [
    [
      '2001-01-14',
      '2001',
      '2001-02',
      '2001-01-14T09:30',
      '2001-01-14T09:30:15.5Z',
      'TODAY-7DAYS',
      'NOW',
      '>=FIRST_DAY_OF_MONTH',
      '<LAST_DAY_OF_YEAR',
      '[TODAY-7DAYS TO TODAY]',
      '[2001-01-01 TO *]',
      '{YESTERDAY TO TOMORROW}',
      '0050-06-01',
      '[2001-01-14T09:30 TO NOW]',
    ],
    ['yesterdayish', '2001-02-30', 'NOW-99999999999YEARS'],
  ],
  Active: [['true', 'no', 'YES', '0'], ['maybe']],
  Nope: [[], ['x']],
};
const fieldSpellings: Record<string, string[]> = {
  Title: ['Title', 'title', 'TITLE', '(Title)'],
  'Major Genre': ['(Major Genre)', 'Major\\ Genre', '( Major Genre )', '(major genre) '],
  Year: ['Year', 'year', '(Year)\t', '(Year)\n'],
  Released: ['Released', '(Released)'],
  Active: ['Active'],
  Nope: ['Nope', '(No Such Field)'],
};
const fieldName = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom('Title', 'Major Genre', 'Year', 'Released', 'Active') },
  { weight: 1, arbitrary: fc.constant('Nope') },
);
const fieldValue = (f: string) =>
  valuesByField[f][0].length ? mostly(...valuesByField[f]) : fc.constantFrom(...valuesByField[f][1]);
const fieldTerm = fieldName.chain((f) =>
  fc
    .tuple(
      fc.constantFrom(...fieldSpellings[f]),
      fc.constantFrom('', '', ' '),
      fieldValue(f),
      fc.constantFrom('', '', '-', '+'),
    )
    .map(
      // A sign on the field only when the value has none (both signs counting is a listed difference).
      ([spelled, gap, value, sign]) => (/^[-+]/.test(value) ? '' : sign) + `${spelled}:${gap}${value}`,
    ),
);
const fieldGroup = fieldName.chain((f) =>
  fc
    // Inside a group a bare AND is an operator (the old parser's reading of `Title:(AND)` is a listed difference).
    .tuple(
      fc.constantFrom(...fieldSpellings[f]),
      fc.array(
        fieldValue(f).filter((v) => v !== 'AND'),
        { minLength: 1, maxLength: 3 },
      ),
      fc.constantFrom(' ', ' OR ', ' AND ', ' || '),
    )
    .map(([spelled, values, join]) => `${spelled}:(${values.join(join)})`),
);

type Operand = { text: string; negGroup: boolean };
const JOINS = [' ', '  ', '\t', ' AND ', ' OR ', ' && ', ' || ', '\nAND\n', '  OR  ', ' AND NOT ', ' OR NOT '];

function sequence(depth: number): fc.Arbitrary<string> {
  const leaf: fc.Arbitrary<Operand> = fc.oneof(wordTerm, phrase, fieldTerm).map((text) => ({ text, negGroup: false }));
  const operand: fc.Arbitrary<Operand> =
    depth === 0
      ? leaf
      : fc.oneof(
          { weight: 3, arbitrary: leaf },
          { weight: 1, arbitrary: fieldGroup.map((text) => ({ text, negGroup: false })) },
          {
            weight: 1,
            arbitrary: fc
              .tuple(fc.constantFrom('', '-', '+'), sequence(depth - 1))
              .map(([sign, inner]) => ({ text: `${sign}(${inner})`, negGroup: sign === '-' })),
          },
        );
  return fc
    .tuple(
      fc.constantFrom('', '', '', 'NOT ', 'AND ', 'OR '),
      operand,
      fc.array(fc.tuple(fc.constantFrom(...JOINS), operand), { maxLength: 3 }),
      fc.option(blanks),
    )
    .map(([lead, first, rest, pad]) => {
      // The old parser read -( as NOT ( and honoured that NOT only at the very start of a group or as
      // " AND NOT " / " OR NOT ": elsewhere it is a listed difference.
      const unsign = (o: Operand) => (o.negGroup ? o.text.slice(1) : o.text);
      let text = lead + (lead === '' ? first.text : unsign(first));
      for (const [join, o] of rest) text += join + (join === ' AND ' || join === ' OR ' ? o.text : unsign(o));
      return pad === null ? text : pad + text + pad;
    });
}
const grammarQuery = sequence(2);

const SOUP = [
  'a',
  'b',
  'Title',
  'Year',
  '1',
  '2001',
  ' ',
  ' ',
  ' ',
  '  ',
  '\t',
  '\n',
  '(',
  ')',
  '"',
  '\\',
  '-',
  '+',
  '!',
  '*',
  ':',
  '[',
  ']',
  '{',
  '}',
  '~',
  '^',
  '/',
  'AND',
  'OR',
  'NOT',
  '&&',
  '||',
  'TO',
  '>',
  '<=',
  '.',
  '?',
  ' AND ',
  ' OR ',
  ' NOT ',
  '(Major Genre)',
  'Title:',
  'Year:',
  'Released:',
  'Active:',
  '[1 TO 2]',
  '{a TO *]',
  '[* TO 2001-01-14}',
  '[NOW-1DAY TO NOW]',
  '"a b"',
  '"a\\"b"',
  '^2',
  '^0.5',
  '^1.5',
  '~0.5',
  '~2',
  'NOW-1DAY',
  '2001-01-14T09:30',
  'true',
  '1e999',
  '-(',
  '+(',
  '!(',
  '(Title):',
  '(Year) :',
  '\\ ',
  '\\:',
  '\\(',
  '\\*',
];

import { isAppError } from '@quarry/errors';
import fc from 'fast-check';
import { fastestSync } from '@quarry/testkit';
import { checkQuerySyntax, parseQuery } from './parse-query';
import type { QueryNode } from './query-node';
import type { FieldDef } from './schema';

/**
 * Hostile input: whatever a caller sends (up to the 10,000 characters the gateway lets through), the
 * parser answers with a QueryNode or an INVALID_ARGUMENT naming a position, within 50 ms, and never with
 * anything else: no RangeError, no stack overflow, no value an engine cannot hold.
 */

const fields: FieldDef[] = [
  { name: 'Title', type: 'string' },
  { name: 'Major Genre', type: 'string' },
  { name: 'Year', type: 'integer' },
  { name: 'Rating', type: 'number' },
  { name: 'Released', type: 'date' },
  { name: 'Active', type: 'boolean' },
];
const NOW = Date.UTC(2024, 4, 15, 12, 30);
const BUDGET_MS = 50;
const MAX_LENGTH = 10_000;

/** Every number of a node is finite: NaN or Infinity would only fail later, as an internal error. */
function expectFiniteNumbers(node: QueryNode): void {
  const stack: unknown[] = [node];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'number') expect(Number.isFinite(v)).toBe(true);
    else if (v && typeof v === 'object') stack.push(...Object.values(v));
  }
}

function outcome(run: () => unknown, query: string): 'node' | 'refused' {
  try {
    const node = run();
    if (node !== undefined) {
      expect(node).toHaveProperty('kind');
      expectFiniteNumbers(node as QueryNode);
    }
    return 'node';
  } catch (err) {
    if (!isAppError(err))
      throw new Error(`${JSON.stringify(query.slice(0, 200))} threw ${String(err)}`, { cause: err });
    expect(err.code).toBe('INVALID_ARGUMENT');
    const position = /position (\d+)/.exec(err.detail);
    if (!position) throw new Error(`no position in ${JSON.stringify(err.detail)}`, { cause: err });
    expect(Number(position[1])).toBeGreaterThanOrEqual(1);
    expect(Number(position[1])).toBeLessThanOrEqual(query.length + 1);
    // Details quote user text cut to 100 characters.
    expect(err.detail.length).toBeLessThan(400);
    return 'refused';
  }
}

/** Timed on the fastest of three runs (fastestSync says why); a throw is judged by outcome(). */
function timed(run: () => unknown): number {
  return fastestSync(BUDGET_MS, () => {
    try {
      run();
    } catch {
      // Judged by outcome().
    }
  }).ms;
}

function expectWellBehaved(query: string): 'node' | 'refused' {
  const parse = () => parseQuery(query, { fields, now: NOW });
  const check = () => checkQuerySyntax(query);
  const result = outcome(parse, query);
  outcome(check, query);
  expect(timed(parse)).toBeLessThan(BUDGET_MS);
  expect(timed(check)).toBeLessThan(BUDGET_MS);
  return result;
}

const PIECES = [
  'a',
  'Title',
  'Major Genre',
  '(Major Genre)',
  'Year:',
  'Released:',
  'Active:',
  'Rating:',
  ':',
  ' ',
  ' ',
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
  '?',
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
  ' TO ',
  '>',
  '>=',
  '<=',
  '1',
  '2001-01-14',
  'NOW-1DAY',
  'TODAY+99999999999YEARS',
  '1e999',
  '^1.5',
  '~0',
  '"a b"',
  '[1 TO 2]',
  '{a TO *]',
  '-(',
  '!(',
  'NOT (',
  ' OR ',
  '\\ ',
  '\\(',
  'é',
  '\u00a0',
  '\u2028',
  '😀',
];
const soup = (maxPieces: number) =>
  fc
    .array(fc.constantFrom(...PIECES), { maxLength: maxPieces, size: 'max' })
    .map((p) => p.join('').slice(0, MAX_LENGTH));
const word = fc.constantFrom('a', 'Title:x', 'Year:1', '"a b"', '-a', 'Released:[NOW TO *]', '(a)');

const adversarial: Array<[string, fc.Arbitrary<string>]> = [
  ['any characters', fc.string({ maxLength: MAX_LENGTH, unit: 'binary', size: 'max' })],
  ['query syntax soup', soup(3000)],
  [
    'nested unclosed groups',
    fc
      .tuple(fc.integer({ min: 1, max: 5000 }), fc.constantFrom('(', 'a:(', '-(', '(Title):(', 'NOT ('))
      .map(([n, open]) => open.repeat(n).slice(0, MAX_LENGTH - 1) + 'x'),
  ],
  [
    'nested closed groups',
    fc
      .tuple(fc.integer({ min: 1, max: 60 }), fc.constantFrom('(', 'NOT (', '-(', 'Title:('), soup(20))
      .map(([n, open, inner]) => open.repeat(n) + inner + ')'.repeat(n)),
  ],
  [
    'NOT chains',
    fc
      .tuple(fc.integer({ min: 1, max: 2400 }), fc.constantFrom('NOT ', '! ', '-', '!', 'AND NOT '))
      .map(([n, not]) => (not.repeat(n) + 'x').slice(-MAX_LENGTH)),
  ],
  ['long OR chains', fc.array(word, { maxLength: 1500, size: 'max' }).map((w) => w.join(' OR ').slice(0, MAX_LENGTH))],
  [
    'deep ranges',
    fc
      .tuple(fc.integer({ min: 1, max: 4000 }), fc.constantFrom('[', '{', 'Year:[', '[1 TO ', '[* TO ['))
      .map(([n, open]) => open.repeat(n).slice(0, MAX_LENGTH)),
  ],
  [
    'quotes and escapes',
    fc
      .array(fc.constantFrom('"', '\\', '\\"', 'a', ' ', '(', ')', ':'), { maxLength: 5000, size: 'max' })
      .map((p) => p.join('').slice(0, MAX_LENGTH)),
  ],
  [
    '10,000 characters',
    fc
      .tuple(soup(40), fc.constantFrom(...PIECES))
      .map(([head, filler]) => (head + filler.repeat(MAX_LENGTH)).slice(0, MAX_LENGTH)),
  ],
];

describe('parseQuery and checkQuerySyntax on hostile input', () => {
  beforeAll(() => {
    // The first calls pay for compiling the code, which no input should be blamed for.
    for (let i = 0; i < 50; i++)
      for (const q of ['a OR (b AND Title:c)', 'Year:[1 TO 2] -"x"', '((a', 'x'.repeat(MAX_LENGTH)])
        outcome(() => parseQuery(q, { fields, now: NOW }), q);
  });

  it.each(adversarial)('%s: a QueryNode or a 400 naming a position, within 50 ms', (name, arb) => {
    let longest = 0;
    const seen = { node: 0, refused: 0 };
    fc.assert(
      fc.property(arb, (query) => {
        longest = Math.max(longest, query.length);
        seen[expectWellBehaved(query)]++;
      }),
      { numRuns: 150 },
    );
    // The generators must reach the sizes they are meant to test.
    if (name !== 'nested closed groups') expect(longest).toBeGreaterThan(MAX_LENGTH / 2);
    expect(seen.node + seen.refused).toBe(150);
  });

  it.each([6, 8, 10, 1000])('refuses NOT ( repeated %i times as the issue reported it, at once', (n) => {
    for (const query of ['NOT ('.repeat(n) + 'x', 'NOT ( '.repeat(n) + 'x']) {
      expect(expectWellBehaved(query)).toBe('refused');
      const open = n > 32 ? 'parentheses nest deeper than 32 levels' : '"(" is never closed';
      expect(() => parseQuery(query, { fields, now: NOW })).toThrow(
        expect.objectContaining({ detail: expect.stringContaining(open) }),
      );
    }
  });

  it('parses 32 nested NOT ( groups, the most it allows, within budget', () => {
    const query = 'NOT ('.repeat(32) + 'Title:x' + ')'.repeat(32);
    expect(expectWellBehaved(query)).toBe('node');
    // An even number of NOTs cancels out.
    expect(parseQuery(query, { fields, now: NOW })).toEqual({
      kind: 'match',
      fields: ['Title'],
      words: ['x'],
      prefix: false,
    });
  });

  it('compiles a 10,000-character OR chain within budget, within the clause limit', () => {
    // Named fields: one test per term, under the 1024-clause limit.
    const query = Array.from({ length: 1000 }, (_, i) => `Title:t${i}`)
      .join(' OR ')
      .slice(0, MAX_LENGTH);
    expect(expectWellBehaved(query)).toBe('node');
    expect(parseQuery(query, { fields, now: NOW })).toMatchObject({ kind: 'or' });
  });

  it('refuses, within budget, a 10,000-character chain of bare words beyond the clause limit', () => {
    const query = Array.from({ length: 1250 }, (_, i) => `t${i}`)
      .join(' OR ')
      .slice(0, MAX_LENGTH);
    expect(expectWellBehaved(query)).toBe('refused');
  });

  it('refuses the date from the issue with a 400 instead of a RangeError later', () => {
    const query = '(Released):[NOW-99999999999YEARS TO NOW]';
    expect(expectWellBehaved(query)).toBe('refused');
    expect(() => parseQuery(query, { fields, now: NOW })).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        detail: 'Date "NOW-99999999999YEARS" at position 13 is outside the supported range (years 1-9999)',
      }),
    );
  });
});

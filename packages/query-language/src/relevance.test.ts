import { parseQuery } from './parse-query';
import {
  bm25,
  editDistance,
  fuzzyExpansions,
  hasScoringClauses,
  idf,
  MAX_FUZZY_EXPANSIONS,
  occurrences,
  resolveFuzzy,
  scoreClauses,
  scoreRecord,
  type TermCounts,
} from './relevance';
import type { FieldDef } from './schema';

const FIELDS: FieldDef[] = [
  { name: 'Title', type: 'string' },
  { name: 'Body', type: 'string' },
  { name: 'Year', type: 'integer' },
];
const q = (text: string) => parseQuery(text, { fields: FIELDS, now: 0 });

describe('BM25', () => {
  it('is the formula as written: k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5))', () => {
    expect(idf(10, 2)).toBeCloseTo(Math.log(1 + 8.5 / 2.5), 15);
    // tf 2 in a field of 4 words where the mean is 8: 1.2 · (0.25 + 0.75 · 0.5) = 0.75.
    expect(bm25(1.5, 2, 4, 8)).toBeCloseTo((1.5 * 2 * 2.2) / (2 + 0.75), 15);
    // Longer than average weighs less, more occurrences weigh more but saturate.
    expect(bm25(1, 1, 20, 8)).toBeLessThan(bm25(1, 1, 4, 8));
    expect(bm25(1, 100, 8, 8)).toBeLessThan(2.2);
  });

  it('counts a phrase left to right without overlap', () => {
    expect(occurrences(['a', 'a', 'a'], ['a'])).toBe(3);
    expect(occurrences(['a', 'a', 'a'], ['a', 'a'])).toBe(1);
    expect(occurrences(['x', 'a', 'b', 'a', 'b'], ['a', 'b'])).toBe(2);
    expect(occurrences(['a'], ['a', 'b'])).toBe(0);
  });

  it('ranks only with words, phrases or fuzzy words outside a NOT', () => {
    expect(hasScoringClauses(q('love'))).toBe(true);
    expect(hasScoringClauses(q('"a b"'))).toBe(true);
    expect(hasScoringClauses(q('lvoe~1'))).toBe(true);
    expect(hasScoringClauses(q('Year:1995 AND Title:lov*'))).toBe(false);
    expect(hasScoringClauses(q('NOT love'))).toBe(false);
    expect(hasScoringClauses(q('*'))).toBe(false);
  });

  it('builds one clause per positive leaf, each field with its own idf and avglen; no words, no part', () => {
    const counts: TermCounts = {
      field: (f) => (f === 'Title' ? { docs: 10, words: 30 } : { docs: 0, words: 0 }),
      df: (_f, w) => (w === 'love' ? 2 : 1),
    };
    const clauses = scoreClauses(q('love^2 AND NOT war AND Year:[1990 TO 2000]'), counts);
    expect(clauses).toHaveLength(3);
    expect(clauses[0]).toEqual({
      kind: 'text',
      boost: 2,
      parts: [{ field: 'Title', words: ['love'], idf: idf(10, 2), avglen: 3 }],
    });
    // The range's two comparisons add 1 once.
    expect(clauses.slice(1).map((c) => c.boost)).toEqual([1, 0]);
    const score = scoreRecord(
      clauses,
      (f) => (f === 'Title' ? ['love', 'story'] : null),
      () => true,
    );
    expect(score).toBeCloseTo(2 * bm25(idf(10, 2), 1, 2, 3) + 1, 12);
  });
});

describe('fuzzy words', () => {
  it('measures optimal string alignment over code points, giving up past the limit', () => {
    expect(editDistance('love', 'lvoe', 2)).toBe(1);
    expect(editDistance('ca', 'abc', 5)).toBe(3);
    expect(editDistance('γράμματα', 'γράματα', 2)).toBe(1);
    expect(editDistance('🐈cat', 'cat', 2)).toBe(1);
    expect(editDistance('a'.repeat(1000), 'b'.repeat(1000), 2)).toBe(3);
  });

  it('expands to the nearest words first, then in code-point order, at most 50', () => {
    expect(fuzzyExpansions(['colour', 'color', 'kolor', 'colours', 'dolor', 'x'], 'color', 1)).toEqual([
      'color',
      'colour',
      'dolor',
      'kolor',
    ]);
    const many = Array.from({ length: 200 }, (_, i) => `ab${String.fromCharCode(0x4e00 + i)}`);
    expect(fuzzyExpansions(many, 'ab', 1)).toHaveLength(MAX_FUZZY_EXPANSIONS);
    expect(fuzzyExpansions(['abc'], 'x'.repeat(1000), 2)).toEqual([]);
  });

  it('resolves every fuzzy word against the vocabulary of the fields it tests', () => {
    const resolved = resolveFuzzy(q('Title:lvoe~1 OR NOT Body:wra~1'), (fields) =>
      fields[0] === 'Title' ? ['love', 'live'] : ['war'],
    );
    expect(resolved).toMatchObject({
      kind: 'or',
      children: [{ expansions: ['love'] }, { kind: 'not', child: { expansions: ['war'] } }],
    });
  });
});

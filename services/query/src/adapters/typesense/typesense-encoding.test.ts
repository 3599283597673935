import type { CompareOp } from '@quarry/query-language';
import {
  booleanRange,
  codewords,
  dateRange,
  doubleKey,
  doubleRange,
  integerKey,
  integerRange,
  INT64_MAX,
  INT64_MIN,
  KEY_MIN,
  pairPrefixPattern,
  pairToken,
  PREFIX_MAX,
  STORED_PREFIX_CHARS,
  storedPrefixToken,
  storedPrefixTokens,
  textTokens,
  TOKEN_MAX,
  wordPrefixPattern,
  wordToken,
  type KeyRange,
} from './typesense-encoding';

const enc = (s: string) => codewords(s).join('');

/** A deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Text mixing what breaks tokenizers: z, digits, `_`, accents, CJK, astral code points. */
function randomText(next: () => number, max = 8): string {
  const alphabet = ['a', 'b', 'y', 'z', '0', '9', '_', 'é', 'e', 'ß', '東', '京', '😀', 'Z', 'z0', ' ', '-'];
  let out = '';
  const n = Math.floor(next() * max);
  for (let i = 0; i < n; i++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

describe('text codewords', () => {
  it('keep ASCII letters and digits as they are and escape everything else into [0-9a-z]', () => {
    expect(enc('london2')).toBe('london2');
    expect(enc('z')).toBe('zz');
    expect(enc('café')).toBe('cafz2e9');
    expect(enc('東')).toBe('z46771');
    expect(enc('😀')).toBe('z51f600');
    expect(enc('_')).toBe('z25f');
  });

  it('tell apart what Typesense would merge: accents, `_` and case', () => {
    // Typesense's tokenizer folds é to e, drops `_` and lower-cases ASCII (src/tokenizer.cpp).
    expect(wordToken(0, 'café')).not.toBe(wordToken(0, 'cafe'));
    expect(pairToken(0, 'ab', 'c')).not.toBe(pairToken(0, 'a', 'bc'));
    expect(wordToken(0, 'A')).not.toBe(wordToken(0, 'a'));
  });

  it('are injective and prefix-preserving on random text (a prefix of a text is a prefix of its code, and only then)', () => {
    const next = random(17);
    for (let i = 0; i < 5000; i++) {
      const a = randomText(next);
      const b = randomText(next);
      expect(enc(a) === enc(b)).toBe(a === b);
      expect(enc(a).startsWith(enc(b))).toBe(a.startsWith(b));
      expect(enc(a)).toMatch(/^[0-9a-z]*$/);
    }
  });
});

describe('tokens', () => {
  it('are single Typesense tokens: only [0-9a-z] (kept verbatim by its tokenizer) and at most 100 characters', () => {
    const next = random(5);
    for (let i = 0; i < 2000; i++) {
      const w = randomText(next, 60) || 'x';
      for (const t of [wordToken(7, w), pairToken(12, w, w), ...storedPrefixTokens(3, w)]) {
        expect(t).toMatch(/^[0-9a-z]+$/);
        expect(t.length).toBeLessThanOrEqual(TOKEN_MAX);
      }
    }
  });

  it('differ between fields and between words and pairs', () => {
    expect(wordToken(1, 'ada')).not.toBe(wordToken(11, 'ada'));
    expect(wordToken(1, 'ab')).not.toBe(pairToken(1, 'a', 'b'));
  });

  it('keep two long words apart even when Typesense would cut both to the same first 100 bytes', () => {
    const stem = 'x'.repeat(140);
    const a = wordToken(0, `${stem}a`);
    const b = wordToken(0, `${stem}b`);
    expect(a).not.toBe(b);
    expect(a.slice(0, TOKEN_MAX)).not.toBe(b.slice(0, TOKEN_MAX));
    expect(wordToken(0, `${stem}a`)).toBe(a);
    const cjk = '東京都'.repeat(20);
    expect(wordToken(0, cjk)).not.toBe(wordToken(0, `${cjk}区`));
  });

  it('give a word its first 1 to 3 characters as stored prefixes, which a short prefix search looks up', () => {
    expect(storedPrefixTokens(2, 'london')).toEqual(['2z8l', '2z8lo', '2z8lon']);
    expect(storedPrefixTokens(2, 'é')).toEqual(['2z8z2e9']);
    expect(STORED_PREFIX_CHARS).toBe(3);
    expect(storedPrefixTokens(2, 'london')).toContain(storedPrefixToken(2, 'lon'));
    expect(storedPrefixTokens(2, 'london')).not.toContain(storedPrefixToken(2, 'lox'));
  });

  it('make prefix patterns that match exactly the words starting so, long words included', () => {
    const long = `${'ab'.repeat(25)}東京${'c'.repeat(80)}`;
    for (const prefix of ['abab', 'ababa', 'ab'.repeat(25), `${'ab'.repeat(25)}東`, `${'ab'.repeat(25)}京`]) {
      const pattern = wordPrefixPattern(4, prefix);
      expect(pattern.endsWith('*')).toBe(true);
      expect(wordToken(4, long).startsWith(pattern.slice(0, -1))).toBe(long.startsWith(prefix));
    }
    expect(wordToken(4, 'abba').startsWith(wordPrefixPattern(4, 'abab').slice(0, -1))).toBe(false);
    const pair = pairPrefixPattern(1, 'new', 'yo');
    expect(pairToken(1, 'new', 'york').startsWith(pair.slice(0, -1))).toBe(true);
    expect(pairToken(1, 'newy', 'ork').startsWith(pair.slice(0, -1))).toBe(false);
  });

  it('refuse a prefix longer than stored tokens keep, instead of matching too much', () => {
    expect(() => wordPrefixPattern(0, 'q'.repeat(PREFIX_MAX))).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => wordPrefixPattern(0, '東'.repeat(12))).toThrow(/too long/);
    expect(() => wordPrefixPattern(0, 'q'.repeat(PREFIX_MAX - 4))).not.toThrow();
  });

  it('of a text value: words, adjacent pairs, runs of three or more words to its end, and stored prefixes', () => {
    const t = textTokens(0, ['new', 'york', 'city']);
    expect(t.words).toEqual(['0z8new', '0z8york', '0z8city']);
    expect(t.pairs).toEqual(['0z8newz0york', '0z8yorkz0city']);
    expect(t.runs).toEqual(['0z8newz0yorkz0city']);
    expect(textTokens(0, ['a', 'new', 'york', 'city']).runs).toEqual(['0z8az0newz0yorkz0city', '0z8newz0yorkz0city']);
    expect(textTokens(0, ['new', 'york']).runs).toEqual([]);
    expect(t.prefixes).toEqual(['0z8n', '0z8ne', '0z8new', '0z8y', '0z8yo', '0z8yor', '0z8c', '0z8ci', '0z8cit']);
  });
});

const inRange = (k: bigint, r: KeyRange) =>
  r !== 'none' && (r.lo === null || k >= r.lo) && (r.hi === null || k <= r.hi);

const OPS: CompareOp[] = ['eq', 'gt', 'gte', 'lt', 'lte'];
function holds(op: CompareOp, a: number, b: number): boolean {
  switch (op) {
    case 'eq':
      return a === b;
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
  }
}

const DOUBLES = [
  0,
  -0,
  5e-324,
  -5e-324,
  0.1,
  0.30000000000000004,
  0.3,
  2.5,
  -2.5,
  16777216,
  16777217,
  2 ** 53,
  2 ** 53 + 2,
  1e300,
  -1e300,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -1,
  1,
];

describe('double keys', () => {
  it('order as the numbers do, -0 equal to 0, never INT64_MIN (Typesense reserves it for missing values)', () => {
    const next = random(3);
    const view = new DataView(new ArrayBuffer(8));
    const values = [...DOUBLES];
    for (let i = 0; i < 3000; i++) {
      view.setBigUint64(0, BigInt(Math.floor(next() * 2 ** 32)) * 2n ** 32n + BigInt(Math.floor(next() * 2 ** 32)));
      const x = view.getFloat64(0);
      if (Number.isFinite(x)) values.push(x);
    }
    for (let i = 0; i + 1 < values.length; i++) {
      const [a, b] = [values[i], values[i + 1]];
      const [ka, kb] = [doubleKey(a), doubleKey(b)];
      expect(ka < kb).toBe(a < b);
      expect(ka === kb).toBe(a === b);
      expect(ka > INT64_MIN && ka <= INT64_MAX).toBe(true);
    }
    expect(doubleKey(-0)).toBe(doubleKey(0));
  });

  it('filter as the embedded engine compares doubles, where float32 could not (16777217, 0.1, 1e300)', () => {
    for (const op of OPS) {
      for (const bound of DOUBLES) {
        const r = doubleRange(op, bound);
        for (const v of DOUBLES)
          expect([op, bound, v, inRange(doubleKey(v), r)]).toEqual([op, bound, v, holds(op, v, bound)]);
      }
    }
  });
});

describe('integer keys and bounds', () => {
  const big = (n: bigint) => [n - 3n, n - 2n, n - 1n, n, n + 1n, n + 2n, n + 3n];
  const INTEGERS = [
    ...big(0n),
    ...big(2n ** 53n),
    ...big(-(2n ** 53n)),
    ...big(2n ** 62n),
    INT64_MIN,
    INT64_MIN + 1n,
    INT64_MIN + 512n,
    INT64_MIN + 513n,
    INT64_MAX,
    INT64_MAX - 511n,
    INT64_MAX - 512n,
    INT64_MAX - 1024n,
    2n ** 63n - 1025n,
  ].filter((n) => n >= INT64_MIN && n <= INT64_MAX);
  const BOUNDS = [
    0,
    -0,
    2,
    2.5,
    -2.5,
    0.5,
    -0.5,
    2 ** 53,
    2 ** 53 + 2,
    // 2^53 + 1 has no double: the literal reads as 2^53, which is the case meant (a value at the edge).
    // eslint-disable-next-line no-loss-of-precision
    9007199254740993,
    -(2 ** 53),
    2 ** 62,
    2 ** 63,
    -(2 ** 63),
    1e19,
    -1e19,
    1e300,
    -1e300,
    4.5e15 + 0.5,
  ];

  it('keep every value but INT64_MIN, which becomes INT64_MIN + 1', () => {
    expect(integerKey(INT64_MIN)).toBe(KEY_MIN);
    expect(integerKey(INT64_MIN + 1n)).toBe(KEY_MIN);
    expect(integerKey(123n)).toBe(123n);
    expect(integerKey(INT64_MAX)).toBe(INT64_MAX);
  });

  it('turn fractional bounds into integer ones (an int64 filter refuses 2.5)', () => {
    expect(integerRange('gt', 2.5)).toEqual({ lo: 3n, hi: null });
    expect(integerRange('gte', 2.5)).toEqual({ lo: 3n, hi: null });
    expect(integerRange('lte', 2.5)).toEqual({ lo: null, hi: 2n });
    expect(integerRange('lt', -2.5)).toEqual({ lo: null, hi: -3n });
    expect(integerRange('eq', 2.5)).toBe('none');
    expect(integerRange('eq', 2)).toEqual({ lo: 2n, hi: 2n });
  });

  it('select what the embedded engine selects: the integers whose nearest double compares so (BIGINT against DOUBLE)', () => {
    // Number(bigint) rounds to nearest, ties to even, as DuckDB's BIGINT to DOUBLE cast does.
    for (const op of OPS) {
      for (const bound of BOUNDS) {
        const r = integerRange(op, bound);
        for (const v of INTEGERS) {
          expect([op, bound, String(v), inRange(integerKey(v), r)]).toEqual([
            op,
            bound,
            String(v),
            holds(op, Number(v), bound),
          ]);
        }
      }
    }
  });

  it('cover every integer that rounds to a number beyond 2^53, and nothing past the int64 range', () => {
    expect(integerRange('eq', 2 ** 53)).toEqual({ lo: 2n ** 53n, hi: 2n ** 53n + 1n });
    // Ties go to the even neighbour: 2^53 + 1 and 2^53 + 3 round away from 2^53 + 2.
    expect(integerRange('eq', 2 ** 53 + 2)).toEqual({ lo: 2n ** 53n + 2n, hi: 2n ** 53n + 2n });
    expect(integerRange('eq', 2 ** 53 + 4)).toEqual({ lo: 2n ** 53n + 3n, hi: 2n ** 53n + 5n });
    expect(integerRange('gt', 1e19)).toBe('none');
    expect(integerRange('lt', 1e19)).toEqual({ lo: null, hi: null });
    expect(integerRange('eq', 2 ** 63)).toEqual({ lo: INT64_MAX - 511n, hi: null });
  });
});

describe('date and boolean bounds', () => {
  it('compare dates in microseconds, the engine timestamp precision', () => {
    const ms = Date.UTC(2020, 0, 1);
    const us = BigInt(ms) * 1000n;
    expect(dateRange('gt', ms)).toEqual({ lo: us + 1n, hi: null });
    expect(inRange(us + 500n, dateRange('gt', ms))).toBe(true);
    expect(inRange(us, dateRange('gt', ms))).toBe(false);
    expect(dateRange('eq', ms)).toEqual({ lo: us, hi: us });
    expect(() => dateRange('eq', 1.5)).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });

  it('order false before true', () => {
    expect(booleanRange('eq', true)).toEqual({ lo: 1n, hi: 1n });
    expect(booleanRange('lt', true)).toEqual({ lo: null, hi: 0n });
  });
});

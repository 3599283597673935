import { mulberry32 } from '../../../../../tests/support/seeded-random';
import { DistinctBits, DISTINCT_SEPARATOR } from './pivot-distinct';
import { Int32List } from './int32-list';
import { TextInterner } from './text-interner';

const SEP = DISTINCT_SEPARATOR.charCodeAt(0);

function codesOf(interner: TextInterner, joined: string): number[] {
  const into = new Int32List();
  interner.codes(joined, SEP, into);
  return Array.from({ length: into.length }, (_, i) => into.at(i));
}

describe('TextInterner', () => {
  it('numbers each distinct text once, in the order first seen, across calls', () => {
    const t = new TextInterner();
    expect(codesOf(t, ['SFO', 'LAX', 'SFO'].join(DISTINCT_SEPARATOR))).toEqual([0, 1, 0]);
    expect(codesOf(t, ['LAX', 'JFK'].join(DISTINCT_SEPARATOR))).toEqual([1, 2]);
    expect(codesOf(t, 'JFK')).toEqual([2]);
    expect(t.size).toBe(3);
  });

  it('tells apart texts that are prefixes of each other, differ in case, past the BMP or in Unicode normalisation', () => {
    const texts = [
      'a',
      'ab',
      'abc',
      'A',
      'AB',
      'b',
      'ba',
      'x y',
      'x  y',
      '\u{1F600}',
      '\u{1F601}',
      '\u00e9',
      'e\u0301',
    ];
    const t = new TextInterner();
    expect(codesOf(t, texts.join(DISTINCT_SEPARATOR))).toEqual(texts.map((_, i) => i));
    expect(codesOf(t, [...texts].reverse().join(DISTINCT_SEPARATOR))).toEqual(
      texts.map((_, i) => texts.length - 1 - i),
    );
  });

  it('keeps every number right while its table grows past many thousands of texts', () => {
    const rnd = mulberry32(7);
    const texts = Array.from({ length: 50_000 }, (_, i) => `${i.toString(36)}-${Math.floor(rnd() * 1e6)}`);
    const t = new TextInterner();
    const first = codesOf(t, texts.join(DISTINCT_SEPARATOR));
    expect(first).toEqual(texts.map((_, i) => i));
    // Seen again in another order, each text gets the number it was given.
    const order = texts.map((_, i) => i).sort(() => rnd() - 0.5);
    expect(codesOf(t, order.map((i) => texts[i]).join(DISTINCT_SEPARATOR))).toEqual(order);
    expect(t.size).toBe(texts.length);
  });
});

describe('DistinctBits', () => {
  it('counts the union of the cells added to each group, as a Set of their texts would', () => {
    const rnd = mulberry32(11);
    const domain = Array.from({ length: 300 }, (_, i) => `v${i}`);
    const cells = Array.from({ length: 400 }, () => {
      const n = Math.floor(rnd() * 20);
      const values = [...new Set(Array.from({ length: n }, () => domain[Math.floor(rnd() * domain.length)]))];
      return { values, group: Math.floor(rnd() * 17) };
    });
    const rows = cells.map((c) => ({ d: c.values.length ? c.values.join(DISTINCT_SEPARATOR) : null }));
    const bits = DistinctBits.of(rows, ['d'], 17);
    if (!bits) throw new Error('within the word budget');
    const want = Array.from({ length: 17 }, () => new Set<string>());
    cells.forEach((c, at) => {
      bits.add(c.group, at);
      for (const v of c.values) want[c.group].add(v);
    });
    for (let g = 0; g < 17; g++) expect(bits.counts(g)).toEqual([want[g].size]);
  });

  it('counts each field apart, a group with no values as 0', () => {
    const rows = [
      { a: ['x', 'y'].join(DISTINCT_SEPARATOR), b: 'p' },
      { a: 'y', b: null },
      { a: null, b: ['q', 'p'].join(DISTINCT_SEPARATOR) },
    ];
    const bits = DistinctBits.of(rows, ['a', 'b'], 3);
    if (!bits) throw new Error('within the word budget');
    [0, 1, 2].forEach((at) => bits.add(0, at));
    bits.add(1, 1);
    expect(bits.counts(0)).toEqual([2, 2]);
    expect(bits.counts(1)).toEqual([1, 0]);
    expect(bits.counts(2)).toEqual([0, 0]);
  });

  it('declines a domain whose bitsets for every group would be too large', () => {
    const many = Array.from({ length: 70_000 }, (_, i) => `v${i}`).join(DISTINCT_SEPARATOR);
    expect(DistinctBits.of([{ d: many }], ['d'], 4000)).toBeUndefined();
    expect(DistinctBits.of([{ d: many }], ['d'], 4)).toBeDefined();
  });
});

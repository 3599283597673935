import fc from 'fast-check';
import { compareCodePoints } from './compare-code-points';

describe('compareCodePoints', () => {
  it('orders strings as their UTF-8 bytes order (DuckDB compares text bytewise)', () => {
    const text = fc.string({
      unit: fc.oneof(
        fc.constantFrom('a', 'z', '\uE000', '\uFFFD', '𝒳', '😀', 'é', '東'),
        fc.string({ unit: 'grapheme', maxLength: 1 }),
      ),
      maxLength: 6,
    });
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(
          Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('differs from JS < exactly where UTF-16 units and code points disagree', () => {
    expect('\uE000' < '𝒳').toBe(false);
    expect(compareCodePoints('\uE000', '𝒳')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'abc')).toBe(0);
  });
});

import fc from 'fast-check';
import { foldCase, words } from './query-node';

describe('foldCase: lower case as DuckDB lower() gives it', () => {
  it("folds 'İ' to 'i' and every capital sigma to 'σ', final or not", () => {
    expect(foldCase('İstanbul')).toBe('istanbul');
    expect(foldCase('ΟΔΟΣ')).toBe('οδοσ');
    expect(foldCase('ΣΑΣ ΣΟΦΙΑ')).toBe('σασ σοφια');
    expect(words('İSTANBUL, ΟΔΟΣ!')).toEqual(['istanbul', 'οδοσ']);
  });

  it('leaves a lower-case final sigma alone (DuckDB keeps it too)', () => {
    expect(foldCase('οδος')).toBe('οδος');
  });

  it('is JS lower case, code point by code point, everywhere else', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const perCodePoint = [...s].map((ch) => (ch === '\u0130' ? 'i' : ch.toLowerCase())).join('');
        expect(foldCase(s)).toBe(perCodePoint);
      }),
      { numRuns: 2000 },
    );
  });
});

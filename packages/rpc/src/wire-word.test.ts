import { AppError } from '@quarry/errors';
import { wireWord } from './wire-word';

describe('wireWord', () => {
  const words = ['Sum', 'Count'] as const;

  it("returns the contract's spelling whatever the case and blanks sent", () => {
    expect(wireWord(words, ' sUM ', 'aggregationType')).toBe('Sum');
  });

  it('answers a 400 naming the param and the allowed words, with the value cut short', () => {
    const huge = 'x'.repeat(10_000);
    let thrown: unknown;
    try {
      wireWord(words, huge, 'totals[0].aggregationType');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    const detail = (thrown as AppError).detail;
    expect(detail).toMatch(/^totals\[0\]\.aggregationType "x{100}…" \(10000 characters\) is not one of Sum, Count$/);
  });
});

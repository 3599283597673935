import { otherKey, otherOf } from './other-key';

describe('otherKey', () => {
  it('reads "Other (N)" unless a shown key reads the same, then "Other (N values)", then numbered', () => {
    const info = { count: 3, kept: ['a'] };
    expect(otherKey(info)).toEqual(['Other (3)']);
    const shown = new Set(['Other (3)']);
    expect(otherKey(info, (l) => shown.has(l))).toEqual(['Other (3 values)']);
    shown.add('Other (3 values)');
    shown.add('Other (3 values) #2');
    expect(otherKey(info, (l) => shown.has(l))).toEqual(['Other (3 values) #3']);
    expect(otherKey({ count: 1, kept: [] }, (l) => l === 'Other (1)')).toEqual(['Other (1 value)']);
  });

  it('is known by identity: a key of the same text is not the Other key', () => {
    const key = otherKey({ count: 2, kept: ['x'] });
    expect(otherOf(key)).toEqual({ count: 2, kept: ['x'] });
    expect(otherOf(['Other (2)'])).toBeUndefined();
  });
});

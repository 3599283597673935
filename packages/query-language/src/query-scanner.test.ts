import { MAX_QUERY_DEPTH, scanQuery, trimmedQuery } from './query-scanner';
import { fastestSync } from '@quarry/testkit';

const scan = (text: string) => scanQuery(trimmedQuery(text));
const refusal = (detail: string) => expect.objectContaining({ code: 'INVALID_ARGUMENT', detail });

describe('scanQuery', () => {
  it.each([
    'Title:(a OR (b AND c))',
    'Year:[1 TO 2} AND Year:{* TO 5]',
    '"an unbalanced ( inside a phrase"',
    'escaped \\( and \\[ and \\" are characters',
    '"a \\" quote inside" (b)',
    '(Major Genre):drama',
    '',
  ])('accepts %s', (q) => {
    expect(() => scan(q)).not.toThrow();
  });

  it.each([
    ['Title:(star', 'Query syntax error at position 7: "(" is never closed'],
    ['(a OR (b)', 'Query syntax error at position 1: "(" is never closed'],
    ['a OR b)', 'Query syntax error at position 7: ")" has no matching "("'],
    [') OR (*', 'Query syntax error at position 1: ")" has no matching "("'],
    ['"abc', 'Query syntax error at position 1: the quote opened here is never closed'],
    ['a "b\\"', 'Query syntax error at position 3: the quote opened here is never closed'],
    ['Year:[1 TO 2', 'Query syntax error at position 6: "[" is never closed'],
    ['Year:{1 TO 2', 'Query syntax error at position 6: "{" is never closed'],
    ['Year:[1 TO 2)', 'Query syntax error at position 6: the range "[" is never closed with "]" or "}"'],
    ['Year:[1 TO [2]]', 'Query syntax error at position 12: "[" inside the range opened at position 6'],
    ['Year:[(1 TO 2]', 'Query syntax error at position 7: "(" inside the range opened at position 6'],
    ['Year:1]', 'Query syntax error at position 7: "]" closes no range'],
    ['(a}', 'Query syntax error at position 3: "}" closes no range'],
  ])('refuses %s naming the position', (q, detail) => {
    expect(() => scan(q)).toThrow(refusal(detail));
  });

  it('counts positions in the text as sent, blanks before it included', () => {
    expect(() => scan('   (a')).toThrow(refusal('Query syntax error at position 4: "(" is never closed'));
  });

  it(`allows ${MAX_QUERY_DEPTH} levels of nesting and refuses one more, where it starts`, () => {
    expect(MAX_QUERY_DEPTH).toBe(32);
    expect(() => scan('('.repeat(32) + 'a' + ')'.repeat(32))).not.toThrow();
    expect(() => scan('('.repeat(33) + 'a' + ')'.repeat(33))).toThrow(
      refusal('Query syntax error at position 33: parentheses nest deeper than 32 levels'),
    );
    // A range is a level too.
    expect(() => scan('('.repeat(31) + 'Year:[1 TO 2]' + ')'.repeat(31))).not.toThrow();
    expect(() => scan('('.repeat(32) + 'Year:[1 TO 2]' + ')'.repeat(32))).toThrow(
      refusal('Query syntax error at position 38: parentheses nest deeper than 32 levels'),
    );
  });

  it('refuses at the first level too deep, at once, however long the rest', () => {
    const q = 'NOT ('.repeat(2000);
    const { ms } = fastestSync(50, () =>
      expect(() => scan(q)).toThrow(
        refusal('Query syntax error at position 165: parentheses nest deeper than 32 levels'),
      ),
    );
    expect(ms).toBeLessThan(50);
  });

  it('does not count parentheses that are escaped or quoted, nor let an escaped quote close a phrase', () => {
    expect(() => scan('\\(\\(\\( a')).not.toThrow();
    expect(() => scan('"((((" a')).not.toThrow();
    expect(() => scan('"\\"(" (')).toThrow(refusal('Query syntax error at position 7: "(" is never closed'));
    // A backslash at the very end escapes nothing and breaks nothing.
    expect(() => scan('a\\')).not.toThrow();
  });
});

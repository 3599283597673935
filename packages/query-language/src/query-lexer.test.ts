import { tokenizeQuery, type Token } from './query-lexer';
import { trimmedQuery } from './query-scanner';

const lex = (text: string): Token[] => tokenizeQuery(trimmedQuery(text));
const kinds = (text: string) => lex(text).map((t) => (t.kind === 'word' && t.operator ? `op:${t.operator}` : t.kind));
const refusal = (detail: string | RegExp) =>
  expect.objectContaining({
    code: 'INVALID_ARGUMENT',
    detail: typeof detail === 'string' ? detail : expect.stringMatching(detail),
  });

describe('tokenizeQuery', () => {
  it('recognises operators only as whole upper-case words', () => {
    expect(kinds('a AND b OR c && d || NOT e')).toEqual([
      'word',
      'op:AND',
      'word',
      'op:OR',
      'word',
      'op:&&',
      'word',
      'op:||',
      'op:NOT',
      'word',
    ]);
    expect(kinds('a and b ANDb bAND a&&b')).toEqual(['word', 'word', 'word', 'word', 'word', 'word']);
    // ( ) and " end an operator word as a blank does; ":" makes it a field, a modifier a word.
    expect(kinds('a AND(b) NOT"c" (d OR)')).toEqual([
      'word',
      'op:AND',
      'open',
      'word',
      'close',
      'op:NOT',
      'phrase',
      'open',
      'word',
      'op:OR',
      'close',
    ]);
    expect(kinds('AND:x AND^2')).toEqual(['field', 'word', 'word']);
  });

  it('separates only on the blanks of the language; other spaces belong to words', () => {
    expect(lex('a\tb\nc\fd\re')).toHaveLength(5);
    expect(lex('a\u00a0b')).toEqual([{ kind: 'word', raw: 'a\u00a0b', sign: null, operator: null, at: 0 }]);
  });

  it('splits a leading sign off words, phrases and fields, and makes "-(" a sign of its own', () => {
    expect(lex('-a +b !c')).toEqual([
      { kind: 'word', raw: 'a', sign: '-', operator: null, at: 0 },
      { kind: 'word', raw: 'b', sign: '+', operator: null, at: 3 },
      { kind: 'word', raw: 'c', sign: '!', operator: null, at: 6 },
    ]);
    // Alone, a sign is a word (that has nothing to search for).
    expect(lex('- x')[0]).toMatchObject({ kind: 'word', raw: '-', sign: null });
    expect(lex('-"a b"')).toEqual([{ kind: 'phrase', raw: 'a b', sign: '-', at: 0 }]);
    expect(lex('-Title:x')[0]).toEqual({ kind: 'field', name: 'Title', sign: '-', at: 0, colon: 6 });
    expect(kinds('-(a) !(b) +(c)')).toEqual([
      'sign',
      'open',
      'word',
      'close',
      'sign',
      'open',
      'word',
      'close',
      'sign',
      'open',
      'word',
      'close',
    ]);
    expect(kinds('-(Major Genre):x')).toEqual(['sign', 'field', 'word']);
  });

  it('reads field names plain, escaped, or in parentheses, with the position of the name', () => {
    expect(lex('Title: x')[0]).toEqual({ kind: 'field', name: 'Title', sign: null, at: 0, colon: 5 });
    expect(lex('Major\\ Genre:x')[0]).toMatchObject({ kind: 'field', name: 'Major Genre' });
    expect(lex('a ( Major Genre ) :x')[1]).toEqual({
      kind: 'field',
      name: 'Major Genre',
      sign: null,
      at: 4,
      colon: 18,
    });
    expect(lex('(Cost Total $):>10')[0]).toMatchObject({ kind: 'field', name: 'Cost Total $' });
    // A group holding ( ) " : or a backslash is a group, not a name.
    expect(kinds('(a OR b)')).toEqual(['open', 'word', 'op:OR', 'word', 'close']);
    expect(kinds('(a\\ b)')).toEqual(['open', 'word', 'close']);
  });

  it('keeps escapes in words for the compiler, and a backslash before an ordinary character as a character', () => {
    expect(lex('a\\:b\\ c')).toEqual([{ kind: 'word', raw: 'a\\:b\\ c', sign: null, operator: null, at: 0 }]);
    expect(lex('C\\x \\')).toEqual([
      { kind: 'word', raw: 'C\\x', sign: null, operator: null, at: 0 },
      { kind: 'word', raw: '\\', sign: null, operator: null, at: 4 },
    ]);
    expect(lex('"a \\"b\\" \\c"')).toEqual([{ kind: 'phrase', raw: 'a \\"b\\" \\c', sign: null, at: 0 }]);
  });

  it('reads ranges with either bracket at each end, * bounds and times', () => {
    expect(lex('[1 TO 2}')).toEqual([
      {
        kind: 'range',
        low: { raw: '1', at: 1 },
        high: { raw: '2', at: 6 },
        lowInclusive: true,
        highInclusive: false,
        at: 0,
      },
    ]);
    expect(lex('{2001-01-14T09:30  TO\t*]')[0]).toMatchObject({
      low: { raw: '2001-01-14T09:30' },
      high: { raw: '*' },
      lowInclusive: false,
      highInclusive: true,
    });
  });

  it.each([
    ['[1TO 2]', 6],
    ['[1 TO2]', 6],
    ['[ 1 TO 2]', 2],
    ['[1 TO 2 ]', 8],
    ['[1 to 2]', 4],
    ['[1 TO 2 3]', 8],
    ['[1 TO ]', 7],
  ])('refuses the malformed range %s at position %i', (q, position) => {
    expect(() => lex(q)).toThrow(
      refusal(
        `Query syntax error at position ${position}: a range is written [low TO high], with { or } for an exclusive end`,
      ),
    );
  });

  it('reads boosts, whole numbers or fractions, onto the word or phrase', () => {
    expect(lex('a^2 "b c"^0.5 d^1.5')).toEqual([
      { kind: 'word', raw: 'a', sign: null, operator: null, at: 0, boost: 2 },
      { kind: 'phrase', raw: 'b c', sign: null, at: 4, boost: 0.5 },
      { kind: 'word', raw: 'd', sign: null, operator: null, at: 14, boost: 1.5 },
    ]);
    expect(() => lex('a^1000001')).toThrow(refusal(/position 2: a boost is at most 1000000/));
    expect(() => lex('a^')).toThrow(
      refusal('Query syntax error at position 2: "^" must be followed by a number, as in word^2'),
    );
    expect(() => lex('a^x')).toThrow(refusal(/position 2: "\^" must be followed by a number/));
    expect(() => lex('a ^2')).toThrow(refusal('Query syntax error at position 3: "^" must follow a word or a phrase'));
  });

  it('reads fuzzy words (~ is 2 edits), refuses more than 2 and similarity fractions', () => {
    expect(lex('x foo~ bar~1^3 baz~0')).toEqual([
      { kind: 'word', raw: 'x', sign: null, operator: null, at: 0 },
      { kind: 'word', raw: 'foo', sign: null, operator: null, at: 2, fuzzy: 2 },
      { kind: 'word', raw: 'bar', sign: null, operator: null, at: 7, boost: 3, fuzzy: 1 },
      { kind: 'word', raw: 'baz', sign: null, operator: null, at: 15, fuzzy: 0 },
    ]);
    // An operator word with a tilde is a word.
    expect(lex('OR~1')).toEqual([{ kind: 'word', raw: 'OR', sign: null, operator: null, at: 0, fuzzy: 1 }]);
    expect(() => lex('x foo~3')).toThrow(refusal('A fuzzy word allows at most 2 edits, not 3 (position 3)'));
    expect(() => lex('x foo~0.8')).toThrow(refusal(/not a similarity \(position 3\)/));
  });

  it('refuses proximity and regular expressions with the messages users know, but takes ~0 as the phrase it is', () => {
    expect(() => lex('"a b"~2')).toThrow(refusal('Proximity search (~) is not supported (position 1)'));
    expect(() => lex('"a b"~01')).toThrow(refusal('Proximity search (~) is not supported (position 1)'));
    expect(() => lex('"a b"~')).toThrow(refusal('Proximity search (~) is not supported (position 1)'));
    expect(lex('"a b"~0 "c"~00^2')).toEqual([
      { kind: 'phrase', raw: 'a b', sign: null, at: 0 },
      { kind: 'phrase', raw: 'c', sign: null, at: 8, boost: 2 },
    ]);
    expect(() => lex('Title:/re/')).toThrow(refusal('Regular expressions are not supported (position 7)'));
    expect(() => lex('a -/re/')).toThrow(refusal('Regular expressions are not supported (position 3)'));
  });

  it('refuses stray syntax characters where they are', () => {
    expect(() => lex('a :b')).toThrow(refusal('Query syntax error at position 3: ":" must follow a field name'));
    expect(() => lex('a ~b')).toThrow(refusal('Query syntax error at position 3: "~" must follow a word or a phrase'));
  });
});

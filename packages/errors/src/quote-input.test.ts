import { quoteInput, quoteList, unpairedSurrogateAt } from './quote-input';

describe('quoteInput', () => {
  it('quotes short strings whole', () => {
    expect(quoteInput('Title')).toBe('"Title"');
  });
  it('cuts long strings to 100 characters and says how long they were', () => {
    const q = quoteInput('x'.repeat(900_000));
    expect(q.length).toBeLessThan(140);
    expect(q).toContain('(900000 characters)');
  });
  it('never splits a surrogate pair', () => {
    const q = quoteInput('😀'.repeat(150));
    expect(q.startsWith(`"${'😀'.repeat(100)}…"`)).toBe(true);
  });
});

describe('quoteList', () => {
  it('lists at most ten names, then how many more', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}`);
    const text = quoteList(keys);
    expect(text.split(', ')).toHaveLength(10);
    expect(text.endsWith('and 39990 more')).toBe(true);
    expect(text.length).toBeLessThan(200);
  });
  it('lists a short list whole', () => {
    expect(quoteList(['a', 'b'])).toBe('"a", "b"');
  });
});

describe('unpairedSurrogateAt', () => {
  it('finds a high or low surrogate standing alone, and passes pairs', () => {
    expect(unpairedSurrogateAt('plain')).toBe(-1);
    expect(unpairedSurrogateAt('𝒳 \ud835\udcb3')).toBe(-1);
    expect(unpairedSurrogateAt('ab\ud800')).toBe(2);
    expect(unpairedSurrogateAt('\udcb3\ud835')).toBe(0);
    expect(unpairedSurrogateAt('𝒳\udc00')).toBe(2);
  });
});

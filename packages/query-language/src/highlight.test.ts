import { highlightRecords, highlightText } from './highlight';
import { parseQuery } from './parse-query';

const word = (w: string) => ({ words: [w], prefix: false });

describe('highlightText', () => {
  it('marks whole words case-insensitively and escapes everything else', () => {
    expect(highlightText('Tom & <b>Jerry</b> "cat"', [word('jerry'), word('cat')], 150)).toBe(
      'Tom &amp; &lt;b&gt;<mark>Jerry</mark>&lt;/b&gt; &quot;<mark>cat</mark>&quot;',
    );
    expect(highlightText('concatenate', [word('cat')], 150)).toBeNull();
  });

  it('marks phrases as a whole, prefixes by their start', () => {
    expect(highlightText('new york, york new', [{ words: ['new', 'york'], prefix: false }], 150)).toBe(
      '<mark>new</mark> <mark>york</mark>, york new',
    );
    expect(highlightText('Interrupted interrupts', [{ words: ['interrup'], prefix: true }], 150)).toBe(
      '<mark>Interrupted</mark> <mark>interrupts</mark>',
    );
  });

  it('cuts long text around the first match between words, saying so with …', () => {
    const text = `${'lorem ipsum '.repeat(30)}the needle is here ${'dolor sit '.repeat(30)}`;
    const out = highlightText(text, [word('needle')], 60) ?? '';
    expect(out.startsWith('…')).toBe(true);
    expect(out.endsWith('…')).toBe(true);
    expect(out).toContain('<mark>needle</mark>');
    const plain = out.replace(/<\/?mark>/g, '').replace(/…/g, '');
    expect(plain.length).toBeLessThanOrEqual(60);
    expect(text).toContain(plain);
    expect(/^\s?[a-z]/.test(plain) && !/^(?:orem|psum)/.test(plain.trim())).toBe(true);
  });
});

describe('highlightRecords', () => {
  it('highlights the fields the query tests, leaving out those without a match', () => {
    const node = parseQuery('cat OR Body:"big dog"', {
      fields: [
        { name: 'Title', type: 'string' },
        { name: 'Body', type: 'string' },
      ],
      now: 0,
    });
    expect(
      highlightRecords(
        [
          { Title: 'The cat', Body: 'a big dog' },
          { Title: 'Nothing', Body: 'dog big' },
        ],
        node,
        { fragmentSize: 150 },
      ),
    ).toEqual([{ Title: 'The <mark>cat</mark>', Body: 'a <mark>big</mark> <mark>dog</mark>' }, {}]);
  });
});

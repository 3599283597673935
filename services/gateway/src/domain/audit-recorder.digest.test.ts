import { paramsDigest } from './audit-recorder';
import { createHash } from 'node:crypto';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('paramsDigest', () => {
  it('is the SHA-256 of the params as JSON.stringify writes them', () => {
    const params = {
      index: 'movies',
      query: 'a "b"',
      page: 2,
      rows: [{ field: 'x' }, 'y', null, true],
      empty: {},
      list: [],
    };
    expect(paramsDigest(params)).toBe(sha(JSON.stringify(params)));
    expect(paramsDigest(undefined)).toBe(sha('null'));
  });

  it('tells different params apart, including a string that looks like punctuation', () => {
    expect(paramsDigest({ a: ['],['] })).not.toBe(paramsDigest({ a: [] }));
    expect(paramsDigest({ a: 1 })).not.toBe(paramsDigest({ a: '1' }));
  });

  it('digests a password, a token and a URL’s credentials as ***: the digest is no oracle for guesses', () => {
    const source = (password: string, url: string) => ({
      name: 'orders',
      connection: { host: 'db', user: 'quarry', password },
      other: { url },
    });
    const a = paramsDigest(source('hunter2', 'https://me:pw1@files.example.com/a.csv?sig=1'));
    const b = paramsDigest(source('correct horse', 'https://you:pw2@files.example.com/a.csv?sig=2'));
    expect(a).toBe(b);
    expect(a).toBe(sha(JSON.stringify(source('***', 'https://***:***@files.example.com/a.csv?***'))));
    // What is not a secret still tells calls apart.
    expect(paramsDigest(source('x', 'https://files.example.com/a.csv'))).not.toBe(
      paramsDigest(source('x', 'https://files.example.com/b.csv')),
    );
    expect(paramsDigest({ token: 'abc', q: 1 })).toBe(paramsDigest({ token: 'def', q: 1 }));
    // A URL no parser takes (port 99999) still has its credentials taken out.
    expect(paramsDigest({ url: 'postgres://me:hunter2@db:99999/x?sslmode=require' })).toBe(
      paramsDigest({ url: 'postgres://me:other@db:99999/x?sslmode=disable' }),
    );
  });

  it('digests params nested 200,000 deep without a stack overflow', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 200_000; i++) deep = i % 2 ? [deep] : { k: deep };
    expect(paramsDigest({ deep })).toMatch(/^[0-9a-f]{64}$/);
  });
});

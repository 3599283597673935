import { CursorCodec } from './cursor-codec';

describe('CursorCodec', () => {
  const codec = new CursorCodec(Buffer.from('k'.repeat(32)));

  it('round-trips state', () => {
    const c = codec.encode('indexes', { after: 'movies', s: 'mo' });
    expect(codec.decode('indexes', c, { s: 'mo' })).toMatchObject({ after: 'movies' });
  });

  it('refuses forged, truncated, foreign and rebound cursors', () => {
    const c = codec.encode('indexes', { after: 'movies', s: '' });
    const [payload, mac] = c.split('.');
    const forged = `${Buffer.from(JSON.stringify({ k: 'indexes', after: 'zzz', s: '' })).toString('base64url')}.${mac}`;
    expect(() => codec.decode('indexes', forged)).toThrow(/cursor is invalid/);
    expect(() => codec.decode('indexes', payload)).toThrow(/cursor is invalid/);
    expect(() => codec.decode('reports', c)).toThrow(/cursor is invalid/);
    expect(() => codec.decode('indexes', c, { s: 'other' })).toThrow(/different search/);
    expect(() => new CursorCodec(Buffer.from('x'.repeat(32))).decode('indexes', c)).toThrow(/cursor is invalid/);
  });
});

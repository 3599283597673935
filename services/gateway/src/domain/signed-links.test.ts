import { createHmac } from 'node:crypto';
import { SignedLinks, type LinkedFile } from './signed-links';

const key = Buffer.from('k'.repeat(32));
const now = Date.parse('2026-03-30T08:00:00Z');
const file: LinkedFile = {
  id: 'a'.repeat(32),
  ext: 'csv',
  filename: 'R-movies-2026-03-30-08-00.csv',
  expires: now / 1000 + 60,
  tokenId: 'tok_1a2B',
  guid: '00000000-0000-4000-8000-000000000001',
};
const links = new SignedLinks(
  key,
  () => 'https://quarry.example.com/',
  () => now,
);
/** A token signed here, apart from the class: base64url JSON, then HMAC-SHA256 of it under the key. */
const signed = (fields: Record<string, unknown>, k = key) => {
  const p = Buffer.from(JSON.stringify(fields)).toString('base64url');
  return `${p}.${createHmac('sha256', k).update(`quarry-delivery-link.${p}`).digest('base64url')}`;
};
const fields = { i: file.id, e: file.ext, n: file.filename, x: file.expires, t: file.tokenId, g: file.guid };

describe('SignedLinks', () => {
  it('a link opens its own file, under the base URL without a doubled slash', () => {
    const url = links.url(file);
    expect(url).toBe(`https://quarry.example.com/exports/signed/${signed(fields)}`);
    expect(links.check(url.split('/').pop()!)).toEqual({ kind: 'ok', file });
  });

  it('expires at its time, and not before', () => {
    expect(links.check(signed({ ...fields, x: now / 1000 }))).toEqual({ kind: 'expired' });
    expect(links.check(signed({ ...fields, x: now / 1000 + 1 })).kind).toBe('ok');
  });

  it.each([
    ['another key', signed(fields, Buffer.from('x'.repeat(32)))],
    [
      'another file under this signature',
      `${signed({ ...fields, i: 'b'.repeat(32) }).split('.')[0]}.${signed(fields).split('.')[1]}`,
    ],
    [
      'a later expiry under this signature',
      `${signed({ ...fields, x: file.expires + 3600 }).split('.')[0]}.${signed(fields).split('.')[1]}`,
    ],
    ['no signature', signed(fields).split('.')[0]],
    ['a short signature', signed(fields).slice(0, -1)],
    ['a path in the id', signed({ ...fields, i: '../../link.key' })],
    ['a path in the name', signed({ ...fields, n: '../x' })],
    ['a header in the name', signed({ ...fields, n: 'a"\r\nSet-Cookie: x' })],
    ['an extension of another form', signed({ ...fields, e: 'c/v' })],
    ['a fractional expiry', signed({ ...fields, x: file.expires + 0.5 })],
    ['JSON of another shape', signed({ id: file.id })],
    [
      'a link that names no owner (signed before links did)',
      signed({ i: file.id, e: file.ext, n: file.filename, x: file.expires }),
    ],
    [
      'another owner under this signature',
      `${signed({ ...fields, t: 'tok_other' }).split('.')[0]}.${signed(fields).split('.')[1]}`,
    ],
    [
      'another report under this signature',
      `${signed({ ...fields, g: 'f'.repeat(36) }).split('.')[0]}.${signed(fields).split('.')[1]}`,
    ],
    ['an owner of another form', signed({ ...fields, t: '../x' })],
    ['a report of another form', signed({ ...fields, g: 7 })],
    [
      'no JSON at all',
      (() => {
        const p = Buffer.from('not json').toString('base64url');
        return `${p}.${createHmac('sha256', key).update(`quarry-delivery-link.${p}`).digest('base64url')}`;
      })(),
    ],
    ['a huge token', `${'A'.repeat(5000)}.${signed(fields).split('.')[1]}`],
    ['an empty token', ''],
  ])('refuses %s as invalid', (_what, token) => {
    expect(links.check(token)).toEqual({ kind: 'invalid' });
  });
});

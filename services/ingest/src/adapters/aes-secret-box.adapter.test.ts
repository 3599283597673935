import { AesSecretBox } from './aes-secret-box.adapter';

describe('AesSecretBox', () => {
  const box = new AesSecretBox(Buffer.from('k'.repeat(32)));

  it('opens what it sealed, with a new nonce each time, and never holds the text in the clear', () => {
    const plain = JSON.stringify({ password: 'hunter2 é ✓' });
    const a = box.seal(plain);
    const b = box.seal(plain);
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(box.open(a)).toBe(plain);
    expect(box.open(b)).toBe(plain);
  });

  it('refuses a changed byte, another key, and a form it does not know, naming the key, not the text', () => {
    const sealed = box.seal('secret');
    const parts = sealed.split('.');
    const flipped = Buffer.from(parts[3], 'base64url');
    flipped[0] ^= 1;
    const tampered = [...parts.slice(0, 3), flipped.toString('base64url')].join('.');
    expect(() => box.open(tampered)).toThrow(/QUARRY_SOURCE_KEY/);
    expect(() => new AesSecretBox(Buffer.from('j'.repeat(32))).open(sealed)).toThrow(/QUARRY_SOURCE_KEY/);
    expect(() => box.open('v2.x.y.z')).toThrow(/not in a form/);
    expect(() => box.open('')).toThrow(/not in a form/);
  });
});

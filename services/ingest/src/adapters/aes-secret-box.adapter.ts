import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AppError } from '@quarry/errors';
import type { SecretBox } from '../ports/secret-box.port';

const VERSION = 'v1';

/**
 * AES-256-GCM under a key derived from QUARRY_SOURCE_KEY (or the data directory's source.key): a random
 * 12-byte nonce per seal, the tag checked on open. Sealed text is `v1.<nonce>.<tag>.<cipher>`, base64url.
 */
export class AesSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    // The configured key is text of any length (at least 32 characters): hashed to the 32 bytes AES-256 takes.
    this.key = createHash('sha256').update('quarry source credentials\0').update(secret).digest();
  }

  seal(plain: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, nonce, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(sealed: string): string {
    const [version, nonce, tag, body] = sealed.split('.');
    if (version !== VERSION || !nonce || !tag || body === undefined)
      throw AppError.internal('A source credential is not in a form this server reads');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw AppError.unavailable(
        'The source credentials cannot be opened with this server’s key (QUARRY_SOURCE_KEY changed?); give the password again with SOURCES.UPDATE',
      );
    }
  }
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MetadataStore } from '../ports/metadata-store.port';
import type { NewToken, TokenRecord } from './identity';

export const TOKEN_PREFIX = 'qk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 43 base62 characters carry 256 bits; rejection sampling keeps every character uniform.
const TOKEN_CHARS = 43;

export function generateTokenValue(): string {
  let out = TOKEN_PREFIX;
  while (out.length < TOKEN_PREFIX.length + TOKEN_CHARS) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < TOKEN_PREFIX.length + TOKEN_CHARS) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Shown next to the token id in listings: enough to recognise, far too little to use. */
export function tokenDisplayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

/** Constant-time equality of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

const DURATION = /^(\d{1,6})([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `90s`, `15m`, `12h`, `30d`; null when the text is not such a duration. */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (!m) return null;
  const amount = Number(m[1]);
  if (amount <= 0) return null;
  return amount * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/** A token as TOKENS.FIND and `quarry token list` show it: usable, revoked, or past its expiry. */
export type TokenStatus = 'active' | 'revoked' | 'expired';

export function tokenStatus(t: Pick<TokenRecord, 'revokedAt' | 'expiresAt'>, now: number): TokenStatus {
  if (t.revokedAt) return 'revoked';
  if (t.expiresAt && Date.parse(t.expiresAt) <= now) return 'expired';
  return 'active';
}

/** A token just made: the record kept, and the clear value, which exists nowhere else from now on. */
export interface IssuedToken {
  record: TokenRecord;
  token: string;
}

/**
 * Makes a token for a user, as `quarry token create` and TOKENS.CREATE both do: a fresh random value,
 * of which only the SHA-256 and a short head are stored. The clear value is returned once, to be shown
 * once; whoever calls this must never log or record it.
 */
export async function issueToken(
  store: Pick<MetadataStore, 'createToken'>,
  t: Omit<NewToken, 'hash' | 'prefix'>,
): Promise<IssuedToken> {
  const token = generateTokenValue();
  const record = await store.createToken({ ...t, hash: hashToken(token), prefix: tokenDisplayPrefix(token) });
  return { record, token };
}

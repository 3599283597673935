import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What a link names: a delivery file (id, extension), the name it downloads as, when it expires, and on
 * whose behalf it opens: the API token of the schedule's owner and the report it delivered. The link is
 * checked against both each time it is opened, as an embed token is against its issuer.
 */
export interface LinkedFile {
  id: string;
  ext: string;
  filename: string;
  /** Unix seconds. */
  expires: number;
  /** The id of the API token the schedule runs as. */
  tokenId: string;
  /** The delivered report's guid. */
  guid: string;
}

export type LinkCheck =
  | { kind: 'ok'; file: LinkedFile }
  /** Signed by this deployment, but past its time. */
  | { kind: 'expired' }
  /** Not a link this deployment signed (tampered, truncated, another file's signature). */
  | { kind: 'invalid' };

const ID = /^[0-9a-f]{32}$/;
const EXT = /^[a-z]{2,8}$/;
// A name any file system accepts, as the delivery made it (report-file names).
const FILENAME = /^[A-Za-z0-9._-]{1,120}$/;
const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/;
const GUID = /^[0-9A-Za-z-]{1,64}$/;
/** A token longer than any this signs is refused before it is decoded. */
const TOKEN_MAX = 600;

/**
 * Links to a delivery's file that need no bearer token: the link is the credential. The token is the
 * file's description (base64url JSON) and its HMAC-SHA256 under the deployment's link key, so nothing in
 * it can be changed, nor a signature moved to another file; it states its own expiry.
 */
export class SignedLinks {
  constructor(
    private readonly key: Buffer,
    /** Where recipients reach the gateway (QUARRY_PUBLIC_URL, else its bound address): asked at each link. */
    private readonly baseUrl: () => string,
    private readonly now: () => number = Date.now,
  ) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(`quarry-delivery-link.${payload}`).digest();
  }

  token(file: LinkedFile): string {
    const payload = Buffer.from(
      JSON.stringify({ i: file.id, e: file.ext, n: file.filename, x: file.expires, t: file.tokenId, g: file.guid }),
      'utf8',
    ).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  url(file: LinkedFile): string {
    return `${this.baseUrl().replace(/\/+$/, '')}/exports/signed/${this.token(file)}`;
  }

  check(token: string): LinkCheck {
    if (token.length > TOKEN_MAX) return { kind: 'invalid' };
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return { kind: 'invalid' };
    const given = Buffer.from(m[2], 'base64url');
    const expected = this.mac(m[1]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'invalid' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
    } catch {
      return { kind: 'invalid' };
    }
    const p = parsed as { i?: unknown; e?: unknown; n?: unknown; x?: unknown; t?: unknown; g?: unknown };
    if (
      typeof p.i !== 'string' ||
      !ID.test(p.i) ||
      typeof p.e !== 'string' ||
      !EXT.test(p.e) ||
      typeof p.n !== 'string' ||
      !FILENAME.test(p.n) ||
      typeof p.x !== 'number' ||
      !Number.isInteger(p.x) ||
      // A link signed before links named their owner opens for no one: no one could be checked.
      typeof p.t !== 'string' ||
      !TOKEN_ID.test(p.t) ||
      typeof p.g !== 'string' ||
      !GUID.test(p.g)
    )
      return { kind: 'invalid' };
    if (p.x * 1000 <= this.now()) return { kind: 'expired' };
    return { kind: 'ok', file: { id: p.i, ext: p.e, filename: p.n, expires: p.x, tokenId: p.t, guid: p.g } };
  }
}

import { randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { DATA_DIR_KEYS, requireDataDirKey } from '@quarry/config';
import { AppError } from '@quarry/errors';
import type { ParameterSettings } from '@quarry/contract';
import type { EmbedClaims, EmbedSigner } from '../ports/embed-signer.port';

const ALG = 'HS256';
const ISSUER = 'quarry';
const AUDIENCE = 'quarry-embed';
/** The embed token's own claims, apart from the registered ones. */
interface QuarryClaims {
  tid?: unknown;
  idx?: unknown;
  rep?: unknown;
  realm?: unknown;
  /** The fixed report parameters as JSON text. */
  par?: unknown;
}

/**
 * Embed tokens as JWTs (HS256) with jose. Verification pins the algorithm, issuer and audience, so a
 * token with `alg: none`, another algorithm, another key or another purpose is refused whatever its
 * header says; expiry is checked with no clock tolerance.
 */
export class JoseEmbedSigner implements EmbedSigner {
  private readonly key: Uint8Array;

  constructor(key: Uint8Array) {
    if (key.length < 32) throw new Error('the embed signing key must be at least 32 bytes');
    this.key = key;
  }

  async sign(
    claims: Omit<EmbedClaims, 'id' | 'expiresAt'>,
    ttlSeconds: number,
  ): Promise<{ token: string; claims: EmbedClaims }> {
    const id = randomUUID();
    const now = Math.floor(Date.now() / 1000);
    const expiresAt = now + ttlSeconds;
    const token = await new SignJWT({
      tid: claims.issuerTokenId,
      idx: claims.index,
      ...(claims.guid === undefined ? {} : { rep: claims.guid }),
      ...(claims.realm === undefined ? {} : { realm: claims.realm }),
      ...(claims.parameters === undefined ? {} : { par: JSON.stringify(claims.parameters) }),
    })
      .setProtectedHeader({ alg: ALG, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(claims.userId)
      .setJti(id)
      .setIssuedAt(now)
      .setExpirationTime(expiresAt)
      .sign(this.key);
    return { token, claims: { ...claims, id, expiresAt } };
  }

  async verify(token: string): Promise<EmbedClaims> {
    let payload;
    try {
      ({ payload } = await jwtVerify<QuarryClaims>(token, this.key, {
        algorithms: [ALG],
        issuer: ISSUER,
        audience: AUDIENCE,
        requiredClaims: ['sub', 'jti', 'exp', 'iat'],
      }));
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new AppError('UNAUTHENTICATED', 'Token expired');
      throw new AppError('UNAUTHENTICATED', 'Token not found or invalid');
    }
    const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    const tid = str(payload.tid);
    const idx = str(payload.idx);
    if (!tid || !idx || !payload.sub || !payload.jti || payload.exp === undefined)
      throw new AppError('UNAUTHENTICATED', 'Token not found or invalid');
    const guid = str(payload.rep);
    const realm = str(payload.realm);
    const parameters = fixedParameters(payload.par);
    return {
      id: payload.jti,
      issuerTokenId: tid,
      userId: payload.sub,
      index: idx,
      ...(guid === undefined ? {} : { guid }),
      ...(realm === undefined ? {} : { realm }),
      ...(parameters === undefined ? {} : { parameters }),
      expiresAt: payload.exp,
    };
  }
}

/** The signed `par` claim read back; this gateway wrote it, so anything but an object is a forged or broken token. */
function fixedParameters(par: unknown): ParameterSettings | undefined {
  if (par === undefined) return undefined;
  try {
    const value: unknown = typeof par === 'string' ? JSON.parse(par) : undefined;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as ParameterSettings;
  } catch {
    // Falls through to the refusal.
  }
  throw new AppError('UNAUTHENTICATED', 'Token not found or invalid');
}

/**
 * The signing key: QUARRY_EMBED_SECRET when configured (every gateway of a split deployment must share
 * it), else a random key kept in the data directory (0600) and shared by its processes.
 */
export function loadEmbedKey(configured: string | undefined, dataDir: string): Uint8Array {
  return new Uint8Array(requireDataDirKey({ ...DATA_DIR_KEYS.embed, configured, dataDir }));
}

import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import type { OidcVerdict, OidcVerifier } from '../ports/oidc-verifier.port';

/** The algorithms a provider signs with that a public key verifies: never none, never HMAC. */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** A discovery document or a key set larger than this is not one. */
const MAX_DOCUMENT_BYTES = 256 * 1024;

export interface JoseOidcVerifierOptions {
  /** QUARRY_OIDC_ISSUER, exactly as the tokens' iss says it. */
  issuer: string;
  /** QUARRY_OIDC_AUDIENCE: what aud must hold. */
  audience: string;
  clockToleranceS?: number;
  /** How long one fetch of the discovery document or the key set may take (default 5 s). */
  fetchTimeoutMs?: number;
  /** The least time between two fetches of the key set on an unknown kid (default 10 s). */
  cooldownMs?: number;
  /** How long fetched keys are used before they are fetched again (default 10 min). */
  maxAgeMs?: number;
  now?: () => number;
}

/** A document fetched within the bound and the size limit, as JSON; throws saying what went wrong. */
async function fetchJson(url: string, timeoutMs: number): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  if (!res.ok) throw new Error(`${url} answered HTTP ${res.status}`);
  const length = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(length) && length > MAX_DOCUMENT_BYTES) throw new Error(`${url} is too large`);
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    size += next.value.length;
    if (size > MAX_DOCUMENT_BYTES) {
      await reader?.cancel();
      throw new Error(`${url} is too large`);
    }
    chunks.push(next.value);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function isKeySet(v: unknown): v is JSONWebKeySet {
  return typeof v === 'object' && v !== null && Array.isArray((v as { keys?: unknown }).keys);
}

/**
 * OpenID Connect JWTs verified with jose against the issuer's keys. The keys are held here (not by
 * jose's remote key set), so a provider that fails, hangs or answers garbage leaves the last good ones in
 * use; one fetch at a time, shared by the calls that wait for it.
 */
export class JoseOidcVerifier implements OidcVerifier {
  private keys: { get: JWTVerifyGetKey; kids: Set<string>; at: number } | undefined;
  private lastFetch = Number.NEGATIVE_INFINITY;
  private fetching: Promise<void> | undefined;
  private jwksUri: string | undefined;
  private readonly fetchTimeoutMs: number;
  private readonly cooldownMs: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(private readonly options: JoseOidcVerifierOptions) {
    this.fetchTimeoutMs = options.fetchTimeoutMs ?? 5000;
    this.cooldownMs = options.cooldownMs ?? 10_000;
    this.maxAgeMs = options.maxAgeMs ?? 600_000;
    this.now = options.now ?? Date.now;
  }

  /** The discovery document's jwks_uri, once; the document must name this very issuer. */
  private async discover(): Promise<string> {
    if (this.jwksUri) return this.jwksUri;
    const base = this.options.issuer.replace(/\/$/, '');
    const doc = await fetchJson(`${base}/.well-known/openid-configuration`, this.fetchTimeoutMs);
    const { issuer, jwks_uri: uri } = (doc ?? {}) as { issuer?: unknown; jwks_uri?: unknown };
    if (issuer !== this.options.issuer) throw new Error(`the discovery document names issuer ${String(issuer)}`);
    if (typeof uri !== 'string' || !/^https?:\/\//.test(uri)) throw new Error('the discovery document has no jwks_uri');
    // Keys over plain http only from an issuer that is itself plain http (a test provider on loopback).
    if (uri.startsWith('http:') && !this.options.issuer.startsWith('http:'))
      throw new Error('the discovery document names a jwks_uri over plain http');
    this.jwksUri = uri;
    return uri;
  }

  /** Fetches the key set (one fetch at a time); a failure keeps the keys held, and is only logged by the caller. */
  private refresh(): Promise<void> {
    this.fetching ??= (async () => {
      this.lastFetch = this.now();
      try {
        const set = await fetchJson(await this.discover(), this.fetchTimeoutMs);
        if (!isKeySet(set)) throw new Error('the key set is not a JWKS');
        const usable = set.keys.filter((k) => typeof k === 'object' && k !== null && k.kty !== 'oct');
        if (usable.length === 0) throw new Error('the key set holds no public key');
        this.keys = {
          get: createLocalJWKSet({ keys: usable }),
          kids: new Set(usable.map((k) => k.kid).filter((k): k is string => typeof k === 'string')),
          at: this.now(),
        };
      } finally {
        this.fetching = undefined;
      }
    })();
    return this.fetching;
  }

  /** Keys for a token with this kid: the held ones, fetched again when stale or when the kid is new (past the cooldown). */
  private async keysFor(kid: string | undefined): Promise<{ get: JWTVerifyGetKey } | undefined> {
    // A fetch under way (a rotation) is waited for: its keys may be the ones this token needs.
    if (this.fetching) await this.fetching.catch(() => undefined);
    const held = this.keys;
    const stale = !held || this.now() - held.at > this.maxAgeMs;
    const unknownKid = held !== undefined && kid !== undefined && !held.kids.has(kid);
    if ((stale || unknownKid) && this.now() - this.lastFetch >= this.cooldownMs)
      await this.refresh().catch(() => undefined);
    return this.keys;
  }

  get issuer(): string {
    return this.options.issuer;
  }

  accepts(token: string): boolean {
    try {
      return decodeJwt(token).iss === this.options.issuer;
    } catch {
      return false;
    }
  }

  async verify(token: string): Promise<OidcVerdict> {
    const refuse = (reason: string, expired = false): OidcVerdict => ({ ok: false, expired, reason });
    let kid: string | undefined;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.alg !== 'string' || !ASYMMETRIC.includes(header.alg))
        return refuse(`alg ${String(header.alg)} is not an asymmetric algorithm`);
      kid = typeof header.kid === 'string' ? header.kid : undefined;
    } catch {
      return refuse('not a JWS');
    }
    const keys = await this.keysFor(kid);
    if (!keys) return refuse('the provider’s keys could not be fetched');
    try {
      const { payload } = await jwtVerify(token, keys.get, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ASYMMETRIC,
        clockTolerance: this.options.clockToleranceS ?? 30,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'exp'],
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') return refuse('no subject');
      return { ok: true, identity: { subject: payload.sub, claims: payload } };
    } catch (err) {
      if (err instanceof errors.JWTExpired) return refuse('expired', true);
      if (err instanceof errors.JOSEError) return refuse(`${err.code}: ${err.message}`);
      throw err;
    }
  }
}

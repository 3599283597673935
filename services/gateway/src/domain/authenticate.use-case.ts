import { AppError } from '@quarry/errors';
import {
  digestsEqual,
  hashToken,
  isScope,
  type Credential,
  type MetadataStore,
  type Scope,
  type User,
} from '@quarry/metadata-store';
import { looksLikeEmbedToken, type EmbedClaims, type EmbedSigner } from '../ports/embed-signer.port';
import type { EmbedTokenRegistry } from './embed-token-registry';
import type { OidcSignIn } from './oidc-sign-in';
import type { Principal } from './principal';

/** The detail text of each authentication failure, one per case (clients match on them). */
export const AUTH_FAILURES = {
  headerInvalid: 'Authorization header missing or invalid',
  emptyToken: 'Bearer token empty',
  notFound: 'Token not found or invalid',
  revoked: 'Token revoked',
  expired: 'Token expired',
  ownerUnresolved: 'Token owner could not be resolved',
  noScope: 'Token has no recognised scope',
} as const;

const BEARER = /^Bearer(?:\s+(.*))?$/i;
// Bounded so an absurd header costs nothing to hash; an embed token with a long realm stays well below.
const MAX_TOKEN_LENGTH = 16_384;
const MAX_API_TOKEN_LENGTH = 512;

/** Who a refused caller was, when the token said so (the audit trail records it). */
export interface Identified {
  userId: string;
  userName: string;
  tokenId: string;
  embedId?: string;
}

export type Authentication =
  | { ok: true; principal: Principal }
  /** `reason`: why a JWT was refused, for the log only (the caller gets the spec's text). */
  | { ok: false; error: AppError; who?: Identified; reason?: string };

/** The scopes an embed token's bearer holds: what its kind of grant needs, if its issuer still holds them. */
const EMBED_SCOPES: { index: readonly Scope[]; report: readonly Scope[] } = {
  index: ['query:execute'],
  report: ['reports:read', 'query:execute'],
};

/** The issuer's permissions narrowed to one index: never admin, never another index, its realm on top. */
export function narrowToIndex(owner: User, index: string): User {
  const readable = owner.admin || owner.indexes.includes('*') || owner.indexes.includes(index);
  return {
    ...owner,
    admin: false,
    indexes: readable ? [index] : [],
    realms: owner.admin ? [] : owner.realms.filter((r) => r.index === index),
  };
}

/**
 * Resolves an Authorization header to a principal, or to the AppError UNAUTHENTICATED / FORBIDDEN with
 * the documented detail. The store is asked on every request: revocation, expiry and owner changes take
 * effect on the very next call, for embed tokens too (through the token that issued them).
 */
export class AuthenticateUseCase {
  constructor(
    private readonly store: MetadataStore,
    private readonly signer?: EmbedSigner,
    private readonly now: () => number = Date.now,
    /** Revocations of single embed tokens (TOKENS.REVOKE_EMBED); none without it. */
    private readonly embedTokens?: EmbedTokenRegistry,
    /** The indexes a user created through the API (the catalog's owners); none without it. */
    private readonly ownedIndexes?: (userId: string) => Promise<string[]>,
    /** OpenID Connect bearer JWTs (QUARRY_OIDC_ISSUER); none without it. */
    private readonly oidc?: OidcSignIn,
  ) {}

  /**
   * The user as the methods see them: an owner reads the indexes they created, whatever their grants say.
   * Asked on every request, as the user is, so a drop or a new upload counts on the next call.
   */
  private async withOwned(user: User): Promise<User> {
    if (!this.ownedIndexes || user.admin || user.indexes.includes('*')) return user;
    const owned = (await this.ownedIndexes(user.id)).filter((name) => !user.indexes.includes(name));
    return owned.length ? { ...user, indexes: [...user.indexes, ...owned] } : user;
  }

  /**
   * Whether a principal authenticated a moment ago may still be dispatched: an embed token revoked by this
   * gateway since (while its body was read) may not. Synchronous, so nothing can slip in between.
   */
  stillValid(principal: Principal): boolean {
    return !principal.embed || !this.embedTokens?.revokedByThisGateway(principal.embed.id);
  }

  async fromHeader(header: string | undefined): Promise<Principal> {
    const result = await this.authenticate(header);
    if (!result.ok) throw result.error;
    return result.principal;
  }

  async authenticate(header: string | undefined): Promise<Authentication> {
    const fail = (detail: string, who?: Identified): Authentication => ({
      ok: false,
      error: new AppError('UNAUTHENTICATED', detail),
      who,
    });
    const match = header === undefined ? null : BEARER.exec(header.trim());
    if (!match) return fail(AUTH_FAILURES.headerInvalid);
    const token = (match[1] ?? '').trim();
    if (token === '') return fail(AUTH_FAILURES.emptyToken);
    if (token.length > MAX_TOKEN_LENGTH) return fail(AUTH_FAILURES.notFound);
    if (looksLikeEmbedToken(token)) {
      // Routed by the unverified iss; each verifier then pins its own algorithms, so a token routed the
      // wrong way (an HMAC token claiming the provider, an RSA one claiming Quarry) is refused there.
      if (this.oidc?.accepts(token)) return this.fromSignIn(token, this.oidc);
      if (this.signer) return this.fromEmbedToken(token, this.signer);
    }
    if (token.length > MAX_API_TOKEN_LENGTH) return fail(AUTH_FAILURES.notFound);

    return this.byTokenHash(hashToken(token));
  }

  /**
   * The principal of a token known by its hash, with every check of a request: a scheduled delivery runs
   * as the token that created it, so a revoked or expired token or a removed owner stops it.
   */
  async fromTokenHash(hash: string): Promise<Principal> {
    const result = await this.byTokenHash(hash);
    if (!result.ok) throw result.error;
    return result.principal;
  }

  /**
   * The principal of an API token named by its id (a delivery link names the schedule's token so), checked
   * as a presented token is: not revoked, not expired, its owner active. Throws the refusal otherwise.
   */
  async fromTokenId(id: string): Promise<Principal> {
    const credential = await this.store.findCredentialById(id);
    const result: Authentication = credential
      ? await this.principalOf(credential)
      : { ok: false, error: new AppError('UNAUTHENTICATED', AUTH_FAILURES.notFound) };
    if (!result.ok) throw result.error;
    return result.principal;
  }

  private async byTokenHash(hash: string): Promise<Authentication> {
    const fail = (detail: string): Authentication => ({ ok: false, error: new AppError('UNAUTHENTICATED', detail) });
    const credential = await this.store.findCredential(hash);
    // The store found it by hash already; the constant-time compare guards adapters that match loosely.
    if (!credential || !digestsEqual(credential.token.hash, hash)) return fail(AUTH_FAILURES.notFound);
    return this.principalOf(credential);
  }

  /** An OpenID Connect JWT: its user and sign-in token, checked as any token is (disabled, revoked, no scope). */
  private async fromSignIn(token: string, oidc: OidcSignIn): Promise<Authentication> {
    const signIn = await oidc.signIn(token);
    if (!signIn.ok) return { ok: false, error: signIn.error, ...(signIn.reason ? { reason: signIn.reason } : {}) };
    const result = await this.principalOf(signIn.credential);
    if (!result.ok) return result;
    // The bearer ends when its JWT does: a token made with it (TOKENS.CREATE) may not outlive it.
    return {
      ok: true,
      principal: {
        ...result.principal,
        token: { prefix: signIn.credential.token.prefix, expiresAt: signIn.expiresAt },
      },
    };
  }

  private async principalOf(credential: Credential): Promise<Authentication> {
    const live = this.liveCredential(credential);
    if (!live.ok) return live;
    const scopes = new Set<Scope>(credential.token.scopes.filter(isScope));
    if (scopes.size === 0) return { ok: false, error: new AppError('FORBIDDEN', AUTH_FAILURES.noScope), who: live.who };
    return {
      ok: true,
      principal: {
        user: await this.withOwned(live.owner),
        scopes,
        tokenId: credential.token.id,
        tokenHash: credential.token.hash,
        token: { prefix: credential.token.prefix, expiresAt: credential.token.expiresAt },
      },
    };
  }

  /** The credential's token is neither revoked nor expired and its owner is active. */
  private liveCredential(
    credential: Credential,
    embedId?: string,
  ): { ok: true; owner: User; who: Identified } | { ok: false; error: AppError; who?: Identified } {
    const record = credential.token;
    const user = credential.owner;
    const who =
      user === null
        ? undefined
        : { userId: user.id, userName: user.name, tokenId: record.id, ...(embedId ? { embedId } : {}) };
    const fail = (detail: string) => ({ ok: false as const, error: new AppError('UNAUTHENTICATED', detail), who });
    if (record.revokedAt !== null) return fail(AUTH_FAILURES.revoked);
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= this.now()) return fail(AUTH_FAILURES.expired);
    if (!user || user.status !== 'active') return fail(AUTH_FAILURES.ownerUnresolved);
    return { ok: true, owner: user, who: who! };
  }

  /**
   * An embed token is good while its signature and expiry are, while it is not revoked itself, and while
   * the API token that issued it would still be accepted and still holds embed:create: revoking that
   * token, or disabling or removing its user, ends every embed token it issued on the next call.
   */
  private async fromEmbedToken(token: string, signer: EmbedSigner): Promise<Authentication> {
    let claims: EmbedClaims;
    try {
      claims = await signer.verify(token);
    } catch (err) {
      if (err instanceof AppError) return { ok: false, error: err };
      throw err;
    }
    const [credential, revoked] = await Promise.all([
      this.store.findCredentialById(claims.issuerTokenId),
      this.embedTokens?.isRevoked(claims.id) ?? false,
    ]);
    if (!credential || credential.token.userId !== claims.userId)
      return { ok: false, error: new AppError('UNAUTHENTICATED', AUTH_FAILURES.notFound) };
    const live = this.liveCredential(credential, claims.id);
    if (!live.ok) return live;
    if (revoked) return { ok: false, error: new AppError('UNAUTHENTICATED', AUTH_FAILURES.revoked), who: live.who };
    const issuerScopes = new Set(credential.token.scopes);
    if (!issuerScopes.has('embed:create'))
      return { ok: false, error: new AppError('UNAUTHENTICATED', AUTH_FAILURES.revoked), who: live.who };
    const needed = claims.guid === undefined ? EMBED_SCOPES.index : EMBED_SCOPES.report;
    const scopes = new Set<Scope>(needed.filter((s) => issuerScopes.has(s)));
    if (scopes.size === 0) return { ok: false, error: new AppError('FORBIDDEN', AUTH_FAILURES.noScope), who: live.who };
    return {
      ok: true,
      principal: {
        user: narrowToIndex(await this.withOwned(live.owner), claims.index),
        scopes,
        tokenId: credential.token.id,
        tokenHash: credential.token.hash,
        embed: {
          id: claims.id,
          index: claims.index,
          ...(claims.guid === undefined ? {} : { guid: claims.guid }),
          ...(claims.parameters === undefined ? {} : { parameters: claims.parameters }),
        },
        narrowing: claims.realm === undefined ? [] : [{ index: claims.index, query: claims.realm }],
      },
    };
  }
}

import { AppError, isAppError } from '@quarry/errors';
import type { Credential, MetadataStore, User, UserChanges } from '@quarry/metadata-store';
import type { OidcVerifier } from '../ports/oidc-verifier.port';
import { mapClaims, realmsFor, type OidcClaimMapping } from './oidc-claims';

/** The hash under which a signed-in user's token is kept: never a SHA-256 (hex), so no bearer can match it. */
export const SIGN_IN_TOKEN_HASH_PREFIX = 'oidc:';
/** A sign-in token's head, as `quarry token list` and TOKENS.FIND show it. */
export const SIGN_IN_TOKEN_PREFIX = 'oidc';
const SIGN_IN_TOKEN_NAME = 'OpenID Connect sign-in';

/** Whether a stored token is a user's OpenID Connect sign-in (no secret exists for it; it ends with its user). */
export function isSignInToken(token: { hash: string }): boolean {
  return token.hash.startsWith(SIGN_IN_TOKEN_HASH_PREFIX);
}

export type SignInStore = Pick<
  MetadataStore,
  'findUserByName' | 'createUser' | 'updateUser' | 'findCredential' | 'createToken' | 'setTokenScopes'
>;

/** A verified sign-in: the credential it acts through and when the bearer JWT expires. */
export type SignIn =
  { ok: true; credential: Credential; expiresAt: string } | { ok: false; error: AppError; reason?: string };

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && new Set([...a, ...b]).size === new Set(a).size;

const sameRealms = (a: User['realms'], b: User['realms']) =>
  JSON.stringify([...a].sort(byRealm)) === JSON.stringify([...b].sort(byRealm));
const byRealm = (x: User['realms'][number], y: User['realms'][number]) =>
  x.index.localeCompare(y.index) || x.query.localeCompare(y.query);

/**
 * An OpenID Connect bearer JWT turned into a stored user and token. The user (`oidc:<claim>`) is made on
 * first sight and keeps what the claims said last (indexes, realms); the token (one per user, no secret)
 * carries the scopes they grant. Everything that runs later as its owner (a schedule, a source refresh, a
 * signed link, an embed token) runs through that token, so it holds the rights of the user's latest
 * sign-in, and stops when the user is disabled or removed.
 */
export class OidcSignIn {
  constructor(
    private readonly store: SignInStore,
    private readonly verifier: OidcVerifier,
    private readonly mapping: OidcClaimMapping,
  ) {}

  /** Whether this bearer is meant for the provider (its unverified `iss` names it): routing only. */
  accepts(token: string): boolean {
    return this.verifier.accepts(token);
  }

  async signIn(token: string): Promise<SignIn> {
    const verdict = await this.verifier.verify(token);
    if (!verdict.ok)
      return {
        ok: false,
        error: new AppError('UNAUTHENTICATED', verdict.expired ? 'Token expired' : 'Token not found or invalid'),
        reason: verdict.reason,
      };
    const { claims } = verdict.identity;
    try {
      const mapped = mapClaims(claims, this.mapping);
      const user = await this.user(mapped.userName, mapped.indexes);
      if (user.status !== 'active')
        return { ok: true, credential: { token: await this.token(user, []), owner: user }, expiresAt: expiry(claims) };
      const fitted = await this.fit(
        user,
        mapped.indexes,
        realmsFor({ ...user, indexes: mapped.indexes ?? user.indexes }, claims, this.mapping),
      );
      return {
        ok: true,
        credential: { token: await this.token(fitted, mapped.scopes), owner: fitted },
        expiresAt: expiry(claims),
      };
    } catch (err) {
      if (isAppError(err) && err.code === 'FORBIDDEN') return { ok: false, error: err };
      throw err;
    }
  }

  /** The user of that name, made on first sight (two first calls at once make one). */
  private async user(name: string, indexes: string[] | undefined): Promise<User> {
    const found = await this.store.findUserByName(name);
    if (found) return found;
    try {
      return await this.store.createUser({ name, admin: false, indexes: indexes ?? [], realms: [] });
    } catch (err) {
      if (!isAppError(err) || err.code !== 'CONFLICT') throw err;
      const raced = await this.store.findUserByName(name);
      if (!raced) throw err;
      return raced;
    }
  }

  /** The stored user brought to what the claims say now, written only when that differs. */
  private async fit(user: User, indexes: string[] | undefined, realms: User['realms']): Promise<User> {
    const changes: UserChanges = {};
    if (indexes !== undefined && !sameSet(indexes, user.indexes)) changes.indexes = indexes;
    if (!sameRealms(realms, user.realms)) changes.realms = realms;
    if (Object.keys(changes).length === 0) return user;
    return this.store.updateUser(user.name, changes);
  }

  /** The user's sign-in token, made on first sight, its scopes brought to the token's. */
  private async token(user: User, scopes: readonly string[]): Promise<Credential['token']> {
    const hash = `${SIGN_IN_TOKEN_HASH_PREFIX}${user.id}`;
    let found = (await this.store.findCredential(hash))?.token;
    if (!found) {
      try {
        found = await this.store.createToken({
          userId: user.id,
          hash,
          prefix: SIGN_IN_TOKEN_PREFIX,
          scopes: [...scopes],
          expiresAt: null,
          name: SIGN_IN_TOKEN_NAME,
        });
      } catch (err) {
        if (!isAppError(err) || err.code !== 'CONFLICT') throw err;
        found = (await this.store.findCredential(hash))?.token;
        if (!found) throw err;
      }
    }
    // A disabled user's token is left as it was: the call is refused anyway.
    if (user.status !== 'active' || found.revokedAt !== null || sameSet(found.scopes, scopes)) return found;
    return this.store.setTokenScopes(found.id, scopes);
  }
}

function expiry(claims: Readonly<Record<string, unknown>>): string {
  // The verifier required a numeric exp.
  return new Date(Number(claims.exp) * 1000).toISOString();
}

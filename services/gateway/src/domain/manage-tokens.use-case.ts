import { AppError, quoteInput } from '@quarry/errors';
import {
  DEFAULT_TOKEN_EXPIRES_IN,
  TOKEN_EXPIRES_IN_MAX_DAYS,
  type TokenSummary,
  type TokensCreateParams,
} from '@quarry/contract';
import {
  issueToken,
  parseDuration,
  tokenStatus,
  type MetadataStore,
  type TokenRecord,
  type User,
} from '@quarry/metadata-store';
import { mayManageUsers } from './manage-users.use-case';
import { isSignInToken } from './oidc-sign-in';
import type { Principal } from './principal';

export type TokenStore = Pick<
  MetadataStore,
  'createToken' | 'findUserByName' | 'listTokens' | 'listUsers' | 'findCredentialById' | 'revokeToken'
>;

const DAY_MS = 86_400_000;
/** One refusal for an unknown id and another user's: telling them apart would confirm the id exists. */
const NO_SUCH_TOKEN = 'Token not found';

export interface CreatedToken {
  id: string;
  /** The clear token: returned to the caller once, never logged, never audited, never stored. */
  token: string;
  prefix: string;
  user: string;
  scopes: string[];
  expiresAt: string | null;
  name?: string;
}

/**
 * TOKENS.CREATE, TOKENS.FIND, TOKENS.REVOKE: a caller's own API tokens, or (users:admin, as an admin) any
 * user's. A token made here is never wider than the one that made it: no scope it lacks, no later expiry,
 * so a token handed to a script cannot mint itself a way out of its limits.
 */
export class ManageTokensUseCase {
  constructor(
    private readonly store: TokenStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** `sent` tells a default expiry (shortened to the calling token's) from one asked for (refused past it). */
  async create(
    p: Principal,
    params: TokensCreateParams & { expiresIn: string },
    expirySent: boolean,
  ): Promise<CreatedToken> {
    const owner = await this.subject(p, params.user, 'create a token for');
    const scopes = [...new Set(params.scopes)];
    for (const scope of scopes)
      if (!p.scopes.has(scope)) throw AppError.forbidden(`Token lacks the scope "${scope}" the new token would carry`);
    const expiresAt = this.expiry(p, params.expiresIn, expirySent);
    const { record, token } = await issueToken(this.store, {
      userId: owner.id,
      scopes,
      expiresAt,
      ...(params.name === undefined ? {} : { name: params.name.trim() }),
    });
    return {
      id: record.id,
      token,
      prefix: record.prefix,
      user: owner.name,
      scopes: record.scopes,
      expiresAt: record.expiresAt,
      ...(record.name === undefined ? {} : { name: record.name }),
    };
  }

  async find(p: Principal, user: string | undefined): Promise<{ tokens: TokenSummary[] }> {
    const owner = await this.subject(p, user, 'list the tokens of');
    const now = this.now();
    const tokens = (await this.store.listTokens()).filter((t) => t.userId === owner.id);
    return { tokens: tokens.map((t) => summary(t, owner.name, now)) };
  }

  async revoke(p: Principal, id: string): Promise<{ id: string; revokedAt: string }> {
    const found = await this.store.findCredentialById(id);
    if (!found || (found.token.userId !== p.user.id && !mayManageUsers(p))) throw AppError.notFound(NO_SUCH_TOKEN);
    if (isSignInToken(found.token))
      throw AppError.invalid(
        `id: token ${quoteInput(id)} is ${found.owner ? quoteInput(found.owner.name) : 'a user'}'s OpenID Connect sign-in; it ends with its user (USERS.DISABLE), not on its own`,
      );
    const revoked = await this.store.revokeToken(found.token.id);
    return { id: revoked.id, revokedAt: revoked.revokedAt! };
  }

  /** The caller's own user, or the named one when the caller may manage users (403 before any lookup otherwise). */
  private async subject(p: Principal, name: string | undefined, doing: string): Promise<User> {
    if (name === undefined || name === p.user.name) return p.user;
    if (!mayManageUsers(p))
      throw AppError.forbidden(
        `Only a token with the users:admin scope whose user is an admin may ${doing} another user`,
      );
    const user = await this.store.findUserByName(name);
    if (!user) throw AppError.notFound(`User ${quoteInput(name)} not found`);
    return user;
  }

  private expiry(p: Principal, expiresIn: string, sent: boolean): string {
    const now = this.now();
    const ms = parseDuration(expiresIn);
    if (ms === null || ms > TOKEN_EXPIRES_IN_MAX_DAYS * DAY_MS)
      throw AppError.invalid(
        `expiresIn must be a duration like 90s, 15m, 12h or 30d, at most ${TOKEN_EXPIRES_IN_MAX_DAYS}d; got ${quoteInput(expiresIn)}`,
      );
    const callerEnds = p.token?.expiresAt ? Date.parse(p.token.expiresAt) : Infinity;
    if (now + ms <= callerEnds) return new Date(now + ms).toISOString();
    // The default gives way to the calling token's own end; an expiry asked for past it is a wider right.
    if (!sent) return new Date(callerEnds).toISOString();
    throw AppError.forbidden(
      `expiresIn ${quoteInput(expiresIn)} would outlive the calling token, which expires at ${p.token!.expiresAt} (leave expiresIn out for ${DEFAULT_TOKEN_EXPIRES_IN} or that, whichever is sooner)`,
    );
  }
}

function summary(t: TokenRecord, user: string, now: number): TokenSummary {
  return {
    id: t.id,
    user,
    prefix: t.prefix,
    scopes: [...t.scopes],
    createdAt: t.createdAt,
    expiresAt: t.expiresAt,
    status: tokenStatus(t, now),
    ...(t.revokedAt ? { revokedAt: t.revokedAt } : {}),
    ...(t.name === undefined ? {} : { name: t.name }),
  };
}

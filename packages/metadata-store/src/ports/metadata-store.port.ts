import type {
  Credential,
  EmbedTokenRecord,
  NewEmbedToken,
  NewToken,
  NewUser,
  TokenRecord,
  User,
  UserChanges,
  UserStatus,
} from '../domain/identity';

/**
 * Users and API tokens (the index catalog and reports have their own ports).
 *
 * Every adapter must guarantee:
 * - user names and token hashes are unique: a duplicate create rejects with AppError CONFLICT and
 *   leaves the stored state unchanged, also when two processes race;
 * - a write is visible to the next read from any process sharing the store (a revoked token is
 *   refused on the very next request);
 * - operations on a missing user or token reject with AppError NOT_FOUND naming it;
 * - returned objects are copies: mutating them does not change the store;
 * - timestamps are ISO-8601 UTC strings;
 * - an embed token record is kept until its expiry, and is as good as gone from then on (find and revoke
 *   treat an expired record as missing whether or not it has been purged yet).
 */
export interface MetadataStore {
  createUser(user: NewUser): Promise<User>;
  findUserByName(name: string): Promise<User | null>;
  listUsers(): Promise<User[]>;
  setUserStatus(name: string, status: UserStatus): Promise<User>;
  /** Replaces the parts of the user given (admin, indexes, realms) and leaves the rest; NOT_FOUND when missing. */
  updateUser(name: string, changes: UserChanges): Promise<User>;
  /** Removes the user; its tokens stay stored but can no longer authenticate. */
  deleteUser(name: string): Promise<void>;

  createToken(token: NewToken): Promise<TokenRecord>;
  findTokenByHash(hash: string): Promise<TokenRecord | null>;
  /**
   * The token with this hash and its owner (null when the owner is gone) in one read: authentication
   * asks this on every request, so adapters answer it with one store round trip and one freshness check.
   */
  findCredential(hash: string): Promise<Credential | null>;
  /** The same by token id: an embed token names the API token that issued it. */
  findCredentialById(id: string): Promise<Credential | null>;
  listTokens(): Promise<TokenRecord[]>;
  /** Revokes by token id; revoking twice keeps the first revocation time. */
  revokeToken(id: string): Promise<TokenRecord>;
  /**
   * Replaces a token's scopes, the rest kept (an OpenID Connect sign-in's token follows the scopes its
   * provider grants); NOT_FOUND when missing.
   */
  setTokenScopes(id: string, scopes: readonly string[]): Promise<TokenRecord>;

  /** Records an issued embed token; a duplicate id rejects with CONFLICT. */
  recordEmbedToken(token: NewEmbedToken): Promise<EmbedTokenRecord>;
  /** The embed token with this id, unless unknown or expired (null). */
  findEmbedToken(id: string): Promise<EmbedTokenRecord | null>;
  /**
   * Revokes an unexpired embed token; with `userId`, only one that user issued. An unknown, expired or
   * (with `userId`) another user's id rejects with one and the same NOT_FOUND. Revoking twice keeps the
   * first revocation time.
   */
  revokeEmbedToken(id: string, userId?: string): Promise<EmbedTokenRecord>;
  /** How many embed tokens this user issued that are neither expired at `now` (ISO-8601) nor revoked. */
  countLiveEmbedTokens(userId: string, now: string): Promise<number>;
  /** Forgets the embed tokens that expired at or before `now` (ISO-8601) and says how many. */
  purgeEmbedTokens(now: string): Promise<number>;

  /** Rejects when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

import type { Credential, NewToken, NewUser, TokenRecord, User, UserStatus } from '../domain/identity';

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
 * - timestamps are ISO-8601 UTC strings.
 */
export interface MetadataStore {
  createUser(user: NewUser): Promise<User>;
  findUserByName(name: string): Promise<User | null>;
  listUsers(): Promise<User[]>;
  setUserStatus(name: string, status: UserStatus): Promise<User>;
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

  /** Rejects when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export { SCOPES, isScope, type Scope } from '@quarry/contract';

export type UserStatus = 'active' | 'disabled';

export interface Realm {
  index: string;
  query: string;
}

export interface User {
  id: string;
  name: string;
  status: UserStatus;
  admin: boolean;
  /** Index names the user may read; ["*"] for all. */
  indexes: string[];
  realms: Realm[];
  createdAt: string;
}

export type NewUser = Pick<User, 'name' | 'admin' | 'indexes' | 'realms'>;

/** What USERS.UPDATE may change of a user: each part given replaces the stored one. */
export type UserChanges = Partial<Pick<User, 'admin' | 'indexes' | 'realms'>>;

export interface TokenRecord {
  id: string;
  userId: string;
  /** SHA-256 of the clear token, hex. The clear value is never stored. */
  hash: string;
  /** A non-secret head of the token so an operator can tell tokens apart. */
  prefix: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** What its creator called it (TOKENS.CREATE name); absent for the CLI's tokens. */
  name?: string;
}

/** A token as authentication needs it: the record and its owner, null when the owner was deleted. */
export interface Credential {
  token: TokenRecord;
  owner: User | null;
}

export type NewToken = Pick<TokenRecord, 'userId' | 'hash' | 'prefix' | 'scopes' | 'expiresAt' | 'name'>;

/**
 * An issued embed token (TOKENS.EMBED), kept until it expires so that its user can revoke it by id; the
 * signed token itself is never stored.
 */
export interface EmbedTokenRecord {
  /** The embed token's id (its JWT `jti`). */
  id: string;
  /** The user it was issued by. */
  userId: string;
  /** The API token that issued it. */
  tokenId: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

export type NewEmbedToken = Pick<EmbedTokenRecord, 'id' | 'userId' | 'tokenId' | 'expiresAt'>;

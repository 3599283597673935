import type { ParameterSettings } from '@quarry/contract';

/** What an embed token says (TOKENS.EMBED): who issued it, and the one thing it may do. */
export interface EmbedClaims {
  /** The embed token's own id (JWT `jti`). */
  id: string;
  /** The API token that issued it: revoking that one ends this one. */
  issuerTokenId: string;
  /** The issuing token's user (JWT `sub`). */
  userId: string;
  /** The index it may read: the one asked for, or the report's. */
  index: string;
  /** Set for a report embed: the only report it may run. */
  guid?: string;
  /** ANDed into every call on top of the user's realms. */
  realm?: string;
  /** Report parameters fixed for every run (a report embed only). */
  parameters?: ParameterSettings;
  /** Seconds since the epoch. */
  expiresAt: number;
}

/**
 * Signs and checks embed tokens. `verify` rejects with AppError UNAUTHENTICATED whatever is wrong (bad
 * signature, another key, an algorithm other than the one signing uses, expired, malformed), and never
 * trusts the token's own header to choose how it is checked.
 */
export interface EmbedSigner {
  sign(
    claims: Omit<EmbedClaims, 'id' | 'expiresAt'>,
    ttlSeconds: number,
  ): Promise<{ token: string; claims: EmbedClaims }>;
  verify(token: string): Promise<EmbedClaims>;
}

/** JWS compact serialization: three base64url parts. An API token (qk_…) never looks like this. */
export function looksLikeEmbedToken(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

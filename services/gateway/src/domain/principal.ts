import type { Scope, User } from '@quarry/metadata-store';
import type { Caller, ParameterSettings } from '@quarry/contract';

/** What an embed token limits its bearer to (TOKENS.EMBED). */
export interface EmbedGrant {
  /** The embed token's id (JWT `jti`): its own rate-limit bucket and audit mark. */
  id: string;
  /** The one index it reads. */
  index: string;
  /** Set for a report embed: the only report it may run. */
  guid?: string;
  /** Report parameters the token fixes: its calls may not set them. */
  parameters?: ParameterSettings;
}

/**
 * The authenticated caller: the token's owner and the recognised scopes the token carries. For an embed
 * token, `user` is already narrowed (no admin, that index only) and `narrowing` holds its realm.
 */
export interface Principal {
  user: User;
  scopes: ReadonlySet<Scope>;
  /** The API token that made the call, or that issued the embed token that did. */
  tokenId: string;
  /** The API token's SHA-256 (as the store keeps it): a schedule runs through it, so revoking it stops them. */
  tokenHash: string;
  /** The API token's non-secret head and expiry, as the store had them on this call. */
  token?: { prefix: string; expiresAt: string | null };
  embed?: EmbedGrant;
  narrowing?: ReadonlyArray<{ index: string; query: string }>;
}

/** The principal as the services see a caller: who, with which rights, narrowed how. */
export function callerOf(p: Principal): Caller {
  return {
    userId: p.user.id,
    userName: p.user.name,
    admin: p.user.admin,
    indexes: p.user.indexes,
    realms: p.user.realms,
    scopes: [...p.scopes],
    ...(p.narrowing && p.narrowing.length > 0 ? { narrowing: p.narrowing } : {}),
  };
}

import type { Scope } from './scopes';

/**
 * Who calls, as every service sees it: the token's user, what they may read, their realms, and the
 * token's scopes. The gateway resolves it from the token; services receive it with each call and never
 * trust it from anyone but the gateway (the internal credential). Functions that need part of it take
 * a `Pick` of this one type.
 */
export interface Caller {
  userId: string;
  userName: string;
  admin: boolean;
  /** Index names the user may read; "*" means all. */
  indexes: readonly string[];
  /** Row-level restrictions: `query` is ANDed into every query on `index`; realms of one index are ORed. */
  realms: ReadonlyArray<{ index: string; query: string }>;
  scopes: readonly Scope[];
  /**
   * Further restrictions ANDed on top of the realms (and applied to admins too): an embed token's realm.
   * They only ever narrow what the caller reads.
   */
  narrowing?: ReadonlyArray<{ index: string; query: string }>;
}

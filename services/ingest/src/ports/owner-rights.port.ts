import type { Caller } from '@quarry/contract';

/**
 * Who a source's runs run as: the user of the token that created it, with that token's scopes, as they
 * are at the time of the run. Adapters reject with an AppError FORBIDDEN saying why (the token revoked or
 * expired, the user disabled or removed) and never cache an answer.
 */
export interface OwnerRights {
  callerOf(tokenHash: string): Promise<Caller>;
}

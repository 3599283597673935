import type { Scope, User } from '@quarry/metadata-store';

/** The authenticated caller: the token's owner and the recognised scopes the token carries. */
export interface Principal {
  user: User;
  scopes: ReadonlySet<Scope>;
  tokenId: string;
}

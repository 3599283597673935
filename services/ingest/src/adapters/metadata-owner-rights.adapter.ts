import type { Caller } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { Credential } from '@quarry/metadata-store';
import type { OwnerRights } from '../ports/owner-rights.port';

/** The creating token's rights read from the metadata store at each run, never cached. */
export class MetadataOwnerRights implements OwnerRights {
  constructor(
    private readonly store: { findCredential(hash: string): Promise<Credential | null> },
    private readonly now: () => number = Date.now,
  ) {}

  async callerOf(tokenHash: string): Promise<Caller> {
    const found = await this.store.findCredential(tokenHash);
    if (!found) throw AppError.forbidden('that token no longer exists');
    const { token, owner } = found;
    if (token.revokedAt !== null) throw AppError.forbidden('that token was revoked');
    if (token.expiresAt !== null && Date.parse(token.expiresAt) <= this.now())
      throw AppError.forbidden('that token has expired');
    if (!owner) throw AppError.forbidden('its user was removed');
    if (owner.status !== 'active') throw AppError.forbidden(`its user ${owner.name} is disabled`);
    return {
      userId: owner.id,
      userName: owner.name,
      admin: owner.admin,
      indexes: owner.indexes,
      realms: owner.realms,
      scopes: token.scopes as Caller['scopes'],
    };
  }
}

import { AppError } from '@quarry/errors';
import { digestsEqual, hashToken, isScope, type MetadataStore, type Scope } from '@quarry/metadata-store';
import type { Principal } from './principal';

/** The detail text of each authentication failure, one per case (clients match on them). */
export const AUTH_FAILURES = {
  headerInvalid: 'Authorization header missing or invalid',
  emptyToken: 'Bearer token empty',
  notFound: 'Token not found or invalid',
  revoked: 'Token revoked',
  expired: 'Token expired',
  ownerUnresolved: 'Token owner could not be resolved',
  noScope: 'Token has no recognised scope',
} as const;

const BEARER = /^Bearer(?:\s+(.*))?$/i;
// Bounded so an absurd header costs nothing to hash.
const MAX_TOKEN_LENGTH = 512;

/**
 * Resolves an Authorization header to a principal, or throws AppError UNAUTHENTICATED / FORBIDDEN with
 * the documented detail. The store is asked on every request: revocation, expiry and owner changes take
 * effect on the very next call.
 */
export class AuthenticateUseCase {
  constructor(
    private readonly store: MetadataStore,
    private readonly now: () => number = Date.now,
  ) {}

  async fromHeader(header: string | undefined): Promise<Principal> {
    const match = header === undefined ? null : BEARER.exec(header.trim());
    if (!match) throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.headerInvalid);
    const token = (match[1] ?? '').trim();
    if (token === '') throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.emptyToken);
    if (token.length > MAX_TOKEN_LENGTH) throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.notFound);

    const hash = hashToken(token);
    const credential = await this.store.findCredential(hash);
    // The store found it by hash already; the constant-time compare guards adapters that match loosely.
    if (!credential || !digestsEqual(credential.token.hash, hash))
      throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.notFound);
    const record = credential.token;
    if (record.revokedAt !== null) throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.revoked);
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= this.now()) {
      throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.expired);
    }
    const user = credential.owner;
    if (!user || user.status !== 'active') throw new AppError('UNAUTHENTICATED', AUTH_FAILURES.ownerUnresolved);
    const scopes = new Set<Scope>(record.scopes.filter(isScope));
    if (scopes.size === 0) throw new AppError('FORBIDDEN', AUTH_FAILURES.noScope);
    return { user, scopes, tokenId: record.id };
  }
}

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
import type { AuditEntry, AuditLog, AuditQuery } from '../ports/audit-log.port';
import type { IndexCatalog, IndexEntry, IndexPublication, LoadLock, LoadLockHolder } from '../ports/index-catalog.port';
import type { MetadataStore } from '../ports/metadata-store.port';

/**
 * A metadata store as its three parts (identities, the index catalog, the audit trail) behind one object:
 * each call forwarded to its part. An adapter (SQLite, MongoDB) makes the parts on one connection and says
 * how it pings and closes.
 */
export abstract class ComposedMetadataStore implements MetadataStore, IndexCatalog, AuditLog {
  protected constructor(
    private readonly identities: Omit<MetadataStore, 'ping' | 'close'>,
    private readonly catalog: IndexCatalog,
    private readonly audit: AuditLog,
  ) {}

  createUser(user: NewUser): Promise<User> {
    return this.identities.createUser(user);
  }

  findUserByName(name: string): Promise<User | null> {
    return this.identities.findUserByName(name);
  }

  listUsers(): Promise<User[]> {
    return this.identities.listUsers();
  }

  setUserStatus(name: string, status: UserStatus): Promise<User> {
    return this.identities.setUserStatus(name, status);
  }

  updateUser(name: string, changes: UserChanges): Promise<User> {
    return this.identities.updateUser(name, changes);
  }

  deleteUser(name: string): Promise<void> {
    return this.identities.deleteUser(name);
  }

  createToken(token: NewToken): Promise<TokenRecord> {
    return this.identities.createToken(token);
  }

  findTokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.identities.findTokenByHash(hash);
  }

  findCredential(hash: string): Promise<Credential | null> {
    return this.identities.findCredential(hash);
  }

  findCredentialById(id: string): Promise<Credential | null> {
    return this.identities.findCredentialById(id);
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.identities.listTokens();
  }

  revokeToken(id: string): Promise<TokenRecord> {
    return this.identities.revokeToken(id);
  }

  setTokenScopes(id: string, scopes: readonly string[]): Promise<TokenRecord> {
    return this.identities.setTokenScopes(id, scopes);
  }

  recordEmbedToken(token: NewEmbedToken): Promise<EmbedTokenRecord> {
    return this.identities.recordEmbedToken(token);
  }

  findEmbedToken(id: string): Promise<EmbedTokenRecord | null> {
    return this.identities.findEmbedToken(id);
  }

  revokeEmbedToken(id: string, userId?: string): Promise<EmbedTokenRecord> {
    return this.identities.revokeEmbedToken(id, userId);
  }

  countLiveEmbedTokens(userId: string, now: string): Promise<number> {
    return this.identities.countLiveEmbedTokens(userId, now);
  }

  purgeEmbedTokens(now: string): Promise<number> {
    return this.identities.purgeEmbedTokens(now);
  }

  appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    return this.audit.appendAudit(entries);
  }

  listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    return this.audit.listAudit(query);
  }

  purgeAudit(before: string): Promise<number> {
    return this.audit.purgeAudit(before);
  }

  publishIndex(entry: IndexPublication): Promise<{ entry: IndexEntry; previous: IndexEntry | null }> {
    return this.catalog.publishIndex(entry);
  }

  getIndex(name: string): Promise<IndexEntry | null> {
    return this.catalog.getIndex(name);
  }

  listIndexes(): Promise<IndexEntry[]> {
    return this.catalog.listIndexes();
  }

  dropIndex(name: string): Promise<IndexEntry> {
    return this.catalog.dropIndex(name);
  }

  getIndexVersion(name: string, version: number): Promise<IndexEntry | null> {
    return this.catalog.getIndexVersion(name, version);
  }

  listIndexVersions(name: string): Promise<IndexEntry[]> {
    return this.catalog.listIndexVersions(name);
  }

  releaseIndexVersions(name: string, versions: readonly number[]): Promise<void> {
    return this.catalog.releaseIndexVersions(name, versions);
  }

  acquireLoadLock(name: string, holder: LoadLockHolder, leaseMs: number): Promise<LoadLock> {
    return this.catalog.acquireLoadLock(name, holder, leaseMs);
  }

  ownedIndexes(userId: string): Promise<string[]> {
    return this.catalog.ownedIndexes(userId);
  }

  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;
}

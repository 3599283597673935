import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { AppError } from '@quarry/errors';
import type {
  Credential,
  EmbedTokenRecord,
  NewEmbedToken,
  NewToken,
  NewUser,
  Realm,
  TokenRecord,
  User,
  UserChanges,
  UserStatus,
} from '../domain/identity';
import type { MetadataStore } from '../ports/metadata-store.port';

interface UserRow {
  id: string;
  name: string;
  status: UserStatus;
  admin: number;
  indexes: string;
  realms: string;
  created_at: string;
}

interface TokenRow {
  id: string;
  user_id: string;
  hash: string;
  prefix: string;
  scopes: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  name: string | null;
}

function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    admin: row.admin === 1,
    indexes: JSON.parse(row.indexes) as string[],
    realms: JSON.parse(row.realms) as Realm[],
    createdAt: row.created_at,
  };
}

interface EmbedTokenRow {
  id: string;
  user_id: string;
  token_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

function toEmbedToken(row: EmbedTokenRow): EmbedTokenRecord {
  return {
    id: row.id,
    userId: row.user_id,
    tokenId: row.token_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

function toToken(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    userId: row.user_id,
    hash: row.hash,
    prefix: row.prefix,
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    ...(row.name === null ? {} : { name: row.name }),
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Users, API tokens and embed tokens (the MetadataStore port) on the store's SQLite connection. */
export class SqliteIdentityStore implements Omit<MetadataStore, 'ping' | 'close'> {
  private readonly stmts;
  /**
   * Credential reads (token + owner) are on every request's path. They are cached until the database changes:
   * PRAGMA data_version moves on every commit by another connection (another process), and this
   * connection's own writes clear the cache, so a revocation still shows on the very next read.
   */
  private readonly cache = new Map<string, object | null>();
  private cacheVersion = -1;
  private readonly dataVersion;

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      insertUser: this.db.prepare(
        'INSERT INTO users (id, name, status, admin, indexes, realms, created_at) VALUES (@id, @name, @status, @admin, @indexes, @realms, @created_at)',
      ),
      userById: this.db.prepare<[string], UserRow>('SELECT * FROM users WHERE id = ?'),
      userByName: this.db.prepare<[string], UserRow>('SELECT * FROM users WHERE name = ?'),
      listUsers: this.db.prepare<[], UserRow>('SELECT * FROM users ORDER BY name'),
      setStatus: this.db.prepare('UPDATE users SET status = ? WHERE name = ?'),
      // A given part replaces the stored one, a NULL one keeps it: one statement, so two updates never interleave.
      updateUser: this.db.prepare(
        `UPDATE users SET admin = COALESCE(@admin, admin), indexes = COALESCE(@indexes, indexes),
         realms = COALESCE(@realms, realms) WHERE name = @name`,
      ),
      deleteUser: this.db.prepare('DELETE FROM users WHERE name = ?'),
      insertToken: this.db.prepare(
        'INSERT INTO tokens (id, user_id, hash, prefix, scopes, created_at, expires_at, revoked_at, name) VALUES (@id, @user_id, @hash, @prefix, @scopes, @created_at, @expires_at, NULL, @name)',
      ),
      tokenByHash: this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE hash = ?'),
      tokenById: this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?'),
      listTokens: this.db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
      revoke: this.db.prepare('UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?'),
      setScopes: this.db.prepare('UPDATE tokens SET scopes = ? WHERE id = ?'),
      insertEmbed: this.db.prepare(
        'INSERT INTO embed_tokens (id, user_id, token_id, created_at, expires_at, revoked_at) VALUES (@id, @user_id, @token_id, @created_at, @expires_at, NULL)',
      ),
      liveEmbed: this.db.prepare<[string, string], EmbedTokenRow>(
        'SELECT * FROM embed_tokens WHERE id = ? AND expires_at > ?',
      ),
      // `@user` NULL: any user's (the operator's CLI).
      revokeEmbed: this.db.prepare(
        `UPDATE embed_tokens SET revoked_at = COALESCE(revoked_at, @now)
       WHERE id = @id AND expires_at > @now AND (@user IS NULL OR user_id = @user)`,
      ),
      purgeEmbeds: this.db.prepare('DELETE FROM embed_tokens WHERE expires_at <= ?'),
      countLiveEmbeds: this.db
        .prepare<[string, string], number>(
          'SELECT COUNT(*) FROM embed_tokens WHERE user_id = ? AND expires_at > ? AND revoked_at IS NULL',
        )
        .pluck(),
    };
    this.dataVersion = this.db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  private cached<R extends object>(key: string, load: () => R | undefined): R | undefined {
    const version = this.dataVersion.get() as number;
    if (version !== this.cacheVersion || this.cache.size > 10_000) {
      this.cache.clear();
      this.cacheVersion = version;
    }
    if (this.cache.has(key)) return (this.cache.get(key) as R | null) ?? undefined;
    const row = load();
    this.cache.set(key, row ?? null);
    return row;
  }

  private wrote(): void {
    this.cache.clear();
  }

  async createUser(user: NewUser): Promise<User> {
    const row: UserRow = {
      id: randomUUID(),
      name: user.name,
      status: 'active',
      admin: user.admin ? 1 : 0,
      indexes: JSON.stringify(user.indexes),
      realms: JSON.stringify(user.realms),
      created_at: new Date().toISOString(),
    };
    try {
      this.stmts.insertUser.run(row);
      this.wrote();
    } catch (err) {
      if (isUniqueViolation(err)) throw AppError.conflict(`User "${user.name}" already exists`);
      throw err;
    }
    return toUser(row);
  }

  async findUserByName(name: string): Promise<User | null> {
    const row = this.stmts.userByName.get(name);
    return row ? toUser(row) : null;
  }

  async listUsers(): Promise<User[]> {
    return this.stmts.listUsers.all().map(toUser);
  }

  async setUserStatus(name: string, status: UserStatus): Promise<User> {
    this.wrote();
    if (this.stmts.setStatus.run(status, name).changes === 0) throw AppError.notFound(`User "${name}" not found`);
    return (await this.findUserByName(name)) as User;
  }

  async updateUser(name: string, changes: UserChanges): Promise<User> {
    this.wrote();
    const res = this.stmts.updateUser.run({
      name,
      admin: changes.admin === undefined ? null : changes.admin ? 1 : 0,
      indexes: changes.indexes === undefined ? null : JSON.stringify(changes.indexes),
      realms: changes.realms === undefined ? null : JSON.stringify(changes.realms),
    });
    if (res.changes === 0) throw AppError.notFound(`User "${name}" not found`);
    return (await this.findUserByName(name)) as User;
  }

  async deleteUser(name: string): Promise<void> {
    this.wrote();
    if (this.stmts.deleteUser.run(name).changes === 0) throw AppError.notFound(`User "${name}" not found`);
  }

  async createToken(token: NewToken): Promise<TokenRecord> {
    const row: TokenRow = {
      id: randomUUID(),
      user_id: token.userId,
      hash: token.hash,
      prefix: token.prefix,
      scopes: JSON.stringify(token.scopes),
      created_at: new Date().toISOString(),
      expires_at: token.expiresAt,
      revoked_at: null,
      name: token.name ?? null,
    };
    try {
      this.stmts.insertToken.run(row);
      this.wrote();
    } catch (err) {
      if (isUniqueViolation(err)) throw AppError.conflict('A token with this hash already exists');
      throw err;
    }
    return toToken(row);
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | null> {
    const row = this.stmts.tokenByHash.get(hash);
    return row ? toToken(row) : null;
  }

  async findCredential(hash: string): Promise<Credential | null> {
    const rows = this.cached(`c:${hash}`, () => {
      const token = this.stmts.tokenByHash.get(hash);
      return token ? { token, owner: this.stmts.userById.get(token.user_id) ?? null } : undefined;
    });
    return rows ? { token: toToken(rows.token), owner: rows.owner ? toUser(rows.owner) : null } : null;
  }

  async findCredentialById(id: string): Promise<Credential | null> {
    const rows = this.cached(`i:${id}`, () => {
      const token = this.stmts.tokenById.get(id);
      return token ? { token, owner: this.stmts.userById.get(token.user_id) ?? null } : undefined;
    });
    return rows ? { token: toToken(rows.token), owner: rows.owner ? toUser(rows.owner) : null } : null;
  }

  async recordEmbedToken(token: NewEmbedToken): Promise<EmbedTokenRecord> {
    const row: EmbedTokenRow = {
      id: token.id,
      user_id: token.userId,
      token_id: token.tokenId,
      created_at: new Date().toISOString(),
      expires_at: token.expiresAt,
      revoked_at: null,
    };
    try {
      // Embed token rows are not in the credential cache: nothing to clear.
      this.stmts.insertEmbed.run(row);
    } catch (err) {
      if (isUniqueViolation(err) || (err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw AppError.conflict('An embed token with this id already exists');
      throw err;
    }
    return toEmbedToken(row);
  }

  async findEmbedToken(id: string): Promise<EmbedTokenRecord | null> {
    const row = this.stmts.liveEmbed.get(id, new Date().toISOString());
    return row ? toEmbedToken(row) : null;
  }

  async revokeEmbedToken(id: string, userId?: string): Promise<EmbedTokenRecord> {
    const now = new Date().toISOString();
    if (this.stmts.revokeEmbed.run({ id, now, user: userId ?? null }).changes === 0)
      throw AppError.notFound('Embed token not found');
    return toEmbedToken(this.stmts.liveEmbed.get(id, now) as EmbedTokenRow);
  }

  async countLiveEmbedTokens(userId: string, now: string): Promise<number> {
    return this.stmts.countLiveEmbeds.get(userId, now) ?? 0;
  }

  async purgeEmbedTokens(now: string): Promise<number> {
    return this.stmts.purgeEmbeds.run(now).changes;
  }

  async listTokens(): Promise<TokenRecord[]> {
    return this.stmts.listTokens.all().map(toToken);
  }

  async revokeToken(id: string): Promise<TokenRecord> {
    this.wrote();
    if (this.stmts.revoke.run(new Date().toISOString(), id).changes === 0)
      throw AppError.notFound(`Token "${id}" not found`);
    return toToken(this.stmts.tokenById.get(id) as TokenRow);
  }

  async setTokenScopes(id: string, scopes: readonly string[]): Promise<TokenRecord> {
    this.wrote();
    if (this.stmts.setScopes.run(JSON.stringify(scopes), id).changes === 0)
      throw AppError.notFound(`Token "${id}" not found`);
    return toToken(this.stmts.tokenById.get(id) as TokenRow);
  }
}

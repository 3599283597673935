import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { openSqlite } from './open-sqlite';
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
  UserStatus,
} from '../domain/identity';
import type { IndexCatalog, IndexEntry, IndexPublication, LoadLock, LoadLockHolder } from '../ports/index-catalog.port';
import { holderIsLive, lockHeldMessage } from './lock-holder';
import type { MetadataStore } from '../ports/metadata-store.port';
import type { AuditEntry, AuditLog, AuditQuery } from '../ports/audit-log.port';

interface AuditRow {
  time: string;
  user_id: string | null;
  user_name: string | null;
  token_id: string | null;
  embed_id: string | null;
  method: string;
  index_name: string | null;
  params_digest: string | null;
  outcome: string;
  duration_ms: number;
  returned: number | null;
  request_id: string;
}

function toAudit(r: AuditRow): AuditEntry {
  return {
    time: r.time,
    userId: r.user_id,
    userName: r.user_name,
    tokenId: r.token_id,
    embedId: r.embed_id,
    method: r.method,
    index: r.index_name,
    paramsDigest: r.params_digest,
    outcome: r.outcome,
    durationMs: r.duration_ms,
    returned: r.returned,
    requestId: r.request_id,
  };
}

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
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  admin INTEGER NOT NULL,
  indexes TEXT NOT NULL,
  realms TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  scopes TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS embed_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS embed_tokens_expiry ON embed_tokens (expires_at);
CREATE TABLE IF NOT EXISTS indexes (
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  fields TEXT NOT NULL,
  views TEXT NOT NULL,
  record_count INTEGER NOT NULL,
  version INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  time TEXT NOT NULL,
  user_id TEXT,
  user_name TEXT,
  token_id TEXT,
  embed_id TEXT,
  method TEXT NOT NULL,
  index_name TEXT,
  params_digest TEXT,
  outcome TEXT NOT NULL,
  duration_ms REAL NOT NULL,
  returned INTEGER,
  request_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_time ON audit (time);
CREATE TABLE IF NOT EXISTS index_versions (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  description TEXT NOT NULL,
  fields TEXT NOT NULL,
  views TEXT NOT NULL,
  record_count INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE IF NOT EXISTS index_locks (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  acquired_at TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`;

interface LockRow {
  name: string;
  holder: string;
  host: string;
  pid: number;
  acquired_at: string;
  expires_at: number;
}

interface IndexRow {
  name: string;
  description: string;
  fields: string;
  views: string;
  record_count: number;
  version: number;
  snapshot: string;
  updated_at: string;
  /** Set when dropped: the row stays as a tombstone so the name's versions never repeat. */
  dropped_at: string | null;
}

function toIndex(row: IndexRow): IndexEntry {
  return {
    name: row.name,
    description: row.description,
    fields: JSON.parse(row.fields) as IndexEntry['fields'],
    views: JSON.parse(row.views) as IndexEntry['views'],
    recordCount: row.record_count,
    version: row.version,
    snapshot: row.snapshot,
    updatedAt: row.updated_at,
  };
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
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Embedded metadata on one SQLite file in WAL mode, safe to share between the processes of one machine. */
export class SqliteMetadataStore implements MetadataStore, IndexCatalog, AuditLog {
  private readonly db: Database.Database;
  private readonly stmts;
  /**
   * Credential reads (token + owner) are on every request's path. They are cached until the database changes:
   * PRAGMA data_version moves on every commit by another connection (another process), and this
   * connection's own writes clear the cache, so a revocation still shows on the very next read.
   */
  private readonly cache = new Map<string, object | null>();
  private cacheVersion = -1;
  private readonly dataVersion;
  private readonly appendAuditBatch: (entries: readonly AuditEntry[]) => void;

  constructor(file: string) {
    this.db = openSqlite(file);
    // One IMMEDIATE transaction: the column check and the ALTER must not interleave with another process's migration.
    this.db
      .transaction(() => {
        this.db.exec(SCHEMA);
        const columns = this.db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('indexes')").all();
        if (!columns.some((c) => c.name === 'dropped_at'))
          this.db.exec('ALTER TABLE indexes ADD COLUMN dropped_at TEXT');
      })
      .immediate();
    this.stmts = {
      insertUser: this.db.prepare(
        'INSERT INTO users (id, name, status, admin, indexes, realms, created_at) VALUES (@id, @name, @status, @admin, @indexes, @realms, @created_at)',
      ),
      userById: this.db.prepare<[string], UserRow>('SELECT * FROM users WHERE id = ?'),
      userByName: this.db.prepare<[string], UserRow>('SELECT * FROM users WHERE name = ?'),
      listUsers: this.db.prepare<[], UserRow>('SELECT * FROM users ORDER BY name'),
      setStatus: this.db.prepare('UPDATE users SET status = ? WHERE name = ?'),
      deleteUser: this.db.prepare('DELETE FROM users WHERE name = ?'),
      insertToken: this.db.prepare(
        'INSERT INTO tokens (id, user_id, hash, prefix, scopes, created_at, expires_at, revoked_at) VALUES (@id, @user_id, @hash, @prefix, @scopes, @created_at, @expires_at, NULL)',
      ),
      tokenByHash: this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE hash = ?'),
      tokenById: this.db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?'),
      listTokens: this.db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
      revoke: this.db.prepare('UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?'),
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
      ping: this.db.prepare('SELECT 1'),
      insertAudit: this.db.prepare(
        `INSERT INTO audit (time, user_id, user_name, token_id, embed_id, method, index_name, params_digest, outcome, duration_ms, returned, request_id)
         VALUES (@time, @user_id, @user_name, @token_id, @embed_id, @method, @index_name, @params_digest, @outcome, @duration_ms, @returned, @request_id)`,
      ),
      purgeAudit: this.db.prepare('DELETE FROM audit WHERE time < ?'),
      indexRow: this.db.prepare<[string], IndexRow>('SELECT * FROM indexes WHERE name = ?'),
      indexByName: this.db.prepare<[string], IndexRow>('SELECT * FROM indexes WHERE name = ? AND dropped_at IS NULL'),
      listIndexes: this.db.prepare<[], IndexRow>('SELECT * FROM indexes WHERE dropped_at IS NULL ORDER BY name'),
      upsertIndex: this.db.prepare(
        `INSERT INTO indexes (name, description, fields, views, record_count, version, snapshot, updated_at, dropped_at)
         VALUES (@name, @description, @fields, @views, @record_count, @version, @snapshot, @updated_at, NULL)
         ON CONFLICT(name) DO UPDATE SET description = excluded.description, fields = excluded.fields, views = excluded.views,
           record_count = excluded.record_count, version = excluded.version, snapshot = excluded.snapshot, updated_at = excluded.updated_at,
           dropped_at = NULL`,
      ),
      tombstoneIndex: this.db.prepare('UPDATE indexes SET dropped_at = ? WHERE name = ? AND dropped_at IS NULL'),
      insertVersion: this.db.prepare(
        `INSERT OR REPLACE INTO index_versions (name, version, description, fields, views, record_count, snapshot, updated_at)
         VALUES (@name, @version, @description, @fields, @views, @record_count, @snapshot, @updated_at)`,
      ),
      versionRow: this.db.prepare<[string, number], Omit<IndexRow, 'dropped_at'>>(
        `SELECT v.* FROM index_versions v JOIN indexes i ON i.name = v.name AND i.dropped_at IS NULL
         WHERE v.name = ? AND v.version = ?`,
      ),
      versionRows: this.db.prepare<[string], Omit<IndexRow, 'dropped_at'>>(
        `SELECT v.* FROM index_versions v JOIN indexes i ON i.name = v.name AND i.dropped_at IS NULL
         WHERE v.name = ? ORDER BY v.version`,
      ),
      releaseVersion: this.db.prepare('DELETE FROM index_versions WHERE name = ? AND version = ?'),
      releaseAll: this.db.prepare('DELETE FROM index_versions WHERE name = ?'),
      lockByName: this.db.prepare<[string], LockRow>('SELECT * FROM index_locks WHERE name = ?'),
      putLock: this.db.prepare(
        `INSERT INTO index_locks (name, holder, host, pid, acquired_at, expires_at) VALUES (@name, @holder, @host, @pid, @acquired_at, @expires_at)
         ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid,
           acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
      ),
      renewLock: this.db.prepare('UPDATE index_locks SET expires_at = ? WHERE name = ? AND holder = ?'),
      releaseLock: this.db.prepare('DELETE FROM index_locks WHERE name = ? AND holder = ?'),
    };
    this.dataVersion = this.db.prepare<[], number>('PRAGMA data_version').pluck();
    const insertAudit = this.stmts.insertAudit;
    this.appendAuditBatch = this.db.transaction((entries: readonly AuditEntry[]) => {
      for (const e of entries)
        insertAudit.run({
          time: e.time,
          user_id: e.userId,
          user_name: e.userName,
          token_id: e.tokenId,
          embed_id: e.embedId,
          method: e.method,
          index_name: e.index,
          params_digest: e.paramsDigest,
          outcome: e.outcome,
          duration_ms: e.durationMs,
          returned: e.returned,
          request_id: e.requestId,
        });
    });
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

  async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // One transaction per batch, committed without a disk sync (synchronous=NORMAL for this one): the
    // writer is the gateway's event loop, and an fsync there held every call behind it (bench/latency:
    // 20 clients lost two thirds of their throughput). In WAL mode that loses nothing when the process
    // crashes, only the last batches in a power cut; users, tokens and reports keep FULL.
    this.db.pragma('synchronous = NORMAL');
    try {
      this.appendAuditBatch(entries);
    } finally {
      this.db.pragma('synchronous = FULL');
    }
    // The audit table is not in the credential cache; no need to clear it.
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const filters: Array<[string, string | undefined]> = [
      ['user_name = ?', query.userName],
      ['time >= ?', query.since],
      ['method = ?', query.method],
    ];
    const given = filters.filter((f): f is [string, string] => f[1] !== undefined);
    const where = given.map(([clause]) => clause);
    const args: Array<string | number> = given.map(([, value]) => value);
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY time DESC, seq DESC LIMIT ?`;
    return this.db
      .prepare<Array<string | number>, AuditRow>(sql)
      .all(...args, query.limit)
      .map(toAudit);
  }

  async purgeAudit(before: string): Promise<number> {
    return this.stmts.purgeAudit.run(before).changes;
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

  async publishIndex(entry: IndexPublication): Promise<{ entry: IndexEntry; previous: IndexEntry | null }> {
    // IMMEDIATE takes the write lock before reading the version, so concurrent publishers serialise.
    const publish = this.db.transaction(() => {
      // The tombstone of a dropped index still holds its last version.
      const stored = this.stmts.indexRow.get(entry.name);
      const prev = stored && stored.dropped_at === null ? stored : undefined;
      const row: IndexRow = {
        name: entry.name,
        description: entry.description,
        fields: JSON.stringify(entry.fields),
        views: JSON.stringify(entry.views),
        record_count: entry.recordCount,
        version: (stored?.version ?? 0) + 1,
        snapshot: entry.snapshot,
        updated_at: new Date().toISOString(),
        dropped_at: null,
      };
      this.stmts.upsertIndex.run(row);
      const { dropped_at: _dropped, ...version } = row;
      this.stmts.insertVersion.run(version);
      return { entry: toIndex(row), previous: prev ? toIndex(prev) : null };
    });
    return publish.immediate();
  }

  async getIndex(name: string): Promise<IndexEntry | null> {
    const row = this.stmts.indexByName.get(name);
    return row ? toIndex(row) : null;
  }

  async listIndexes(): Promise<IndexEntry[]> {
    return this.stmts.listIndexes.all().map(toIndex);
  }

  async dropIndex(name: string): Promise<IndexEntry> {
    const drop = this.db.transaction(() => {
      const row = this.stmts.indexByName.get(name);
      if (!row) throw AppError.notFound(`Index "${name}" not found`);
      this.stmts.tombstoneIndex.run(new Date().toISOString(), name);
      this.stmts.releaseAll.run(name);
      return toIndex(row);
    });
    return drop.immediate();
  }

  async getIndexVersion(name: string, version: number): Promise<IndexEntry | null> {
    const row = this.stmts.versionRow.get(name, version);
    return row ? toIndex({ ...row, dropped_at: null }) : null;
  }

  async listIndexVersions(name: string): Promise<IndexEntry[]> {
    return this.stmts.versionRows.all(name).map((row) => toIndex({ ...row, dropped_at: null }));
  }

  async releaseIndexVersions(name: string, versions: readonly number[]): Promise<void> {
    this.db.transaction(() => {
      for (const v of versions) this.stmts.releaseVersion.run(name, v);
    })();
  }

  async acquireLoadLock(name: string, holder: LoadLockHolder, leaseMs: number): Promise<LoadLock> {
    const acquire = this.db.transaction(() => {
      const now = Date.now();
      const held = this.stmts.lockByName.get(name);
      if (held && held.holder !== holder.id && holderIsLive(held, held.expires_at, now)) {
        throw AppError.conflict(lockHeldMessage(name, held, held.acquired_at));
      }
      this.stmts.putLock.run({
        name,
        holder: holder.id,
        host: holder.host,
        pid: holder.pid,
        acquired_at: new Date(now).toISOString(),
        expires_at: now + leaseMs,
      });
    });
    acquire.immediate();
    return {
      renew: async () => {
        if (this.stmts.renewLock.run(Date.now() + leaseMs, name, holder.id).changes === 0) {
          throw AppError.conflict(
            `The load lock of index "${name}" was lost (its lease ran out and another process took it over)`,
          );
        }
      },
      release: async () => {
        this.stmts.releaseLock.run(name, holder.id);
      },
    };
  }

  async ping(): Promise<void> {
    this.stmts.ping.get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

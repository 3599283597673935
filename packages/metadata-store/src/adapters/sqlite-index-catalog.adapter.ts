import type Database from 'better-sqlite3';
import { AppError } from '@quarry/errors';
import type {
  IndexCatalog,
  IndexEntry,
  IndexOrigin,
  IndexPublication,
  LoadLock,
  LoadLockHolder,
} from '../ports/index-catalog.port';
import { holderIsLive, LOCK_RETRY_S, lockHeldMessage } from './lock-holder';

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
  rollups: string | null;
  owner?: string | null;
  origin?: string | null;
  sha256?: string | null;
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
    ...(row.sha256 ? { sha256: row.sha256 } : {}),
    updatedAt: row.updated_at,
    ...(row.rollups ? { rollups: JSON.parse(row.rollups) as IndexEntry['rollups'] } : {}),
    ...(row.owner ? { owner: row.owner } : {}),
    ...(row.origin ? { origin: JSON.parse(row.origin) as IndexOrigin } : {}),
  };
}

/** The index catalog, its kept versions and the load locks (the IndexCatalog port) on the store's SQLite connection. */
export class SqliteIndexCatalog implements IndexCatalog {
  private readonly stmts;

  constructor(private readonly db: Database.Database) {
    this.stmts = {
      indexRow: this.db.prepare<[string], IndexRow>('SELECT * FROM indexes WHERE name = ?'),
      indexByName: this.db.prepare<[string], IndexRow>('SELECT * FROM indexes WHERE name = ? AND dropped_at IS NULL'),
      listIndexes: this.db.prepare<[], IndexRow>('SELECT * FROM indexes WHERE dropped_at IS NULL ORDER BY name'),
      ownedIndexes: this.db.prepare<[string], { name: string }>(
        'SELECT name FROM indexes WHERE owner = ? AND dropped_at IS NULL ORDER BY name',
      ),
      upsertIndex: this.db.prepare(
        `INSERT INTO indexes (name, description, fields, views, record_count, version, snapshot, sha256, updated_at, rollups, owner, origin, dropped_at)
       VALUES (@name, @description, @fields, @views, @record_count, @version, @snapshot, @sha256, @updated_at, @rollups, @owner, @origin, NULL)
       ON CONFLICT(name) DO UPDATE SET description = excluded.description, fields = excluded.fields, views = excluded.views,
         record_count = excluded.record_count, version = excluded.version, snapshot = excluded.snapshot, sha256 = excluded.sha256, updated_at = excluded.updated_at,
         rollups = excluded.rollups, owner = excluded.owner, origin = excluded.origin, dropped_at = NULL`,
      ),
      tombstoneIndex: this.db.prepare('UPDATE indexes SET dropped_at = ? WHERE name = ? AND dropped_at IS NULL'),
      insertVersion: this.db.prepare(
        `INSERT OR REPLACE INTO index_versions (name, version, description, fields, views, record_count, snapshot, sha256, updated_at, rollups, origin)
       VALUES (@name, @version, @description, @fields, @views, @record_count, @snapshot, @sha256, @updated_at, @rollups, @origin)`,
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
        sha256: entry.sha256 ?? null,
        updated_at: new Date().toISOString(),
        rollups: entry.rollups?.length ? JSON.stringify(entry.rollups) : null,
        owner: entry.owner ?? null,
        origin: entry.origin ? JSON.stringify(entry.origin) : null,
        dropped_at: null,
      };
      this.stmts.upsertIndex.run(row);
      const { dropped_at: _dropped, owner: _owner, ...version } = row;
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

  async ownedIndexes(userId: string): Promise<string[]> {
    return this.stmts.ownedIndexes.all(userId).map((r) => r.name);
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
        throw AppError.busy(lockHeldMessage(name, held, held.acquired_at), LOCK_RETRY_S);
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
}

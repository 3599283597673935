import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { openSqlite } from '@quarry/metadata-store/sqlite';
import { AppError, quoteInput } from '@quarry/errors';
import { searchText } from '../domain/search-words';
import type {
  NewReport,
  ReportChange,
  ReportQuery,
  ReportRecord,
  ReportStore,
  ReportVersion,
  ReportViewer,
  TrashedReport,
} from '../ports/report-store.port';

interface Row {
  seq: number;
  guid: string;
  owner_id: string;
  owner_name: string;
  name: string;
  description: string;
  folder: string;
  shared: number;
  type: ReportRecord['type'];
  idx: string;
  method: string;
  params: string;
  version: number;
  index_version: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

interface VersionRow {
  guid: string;
  version: number;
  params: string;
  index_version: number;
  saved_at: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS reports (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  guid TEXT NOT NULL UNIQUE,
  owner_id TEXT NOT NULL,
  owner_name TEXT NOT NULL,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL,
  description TEXT NOT NULL,
  folder TEXT NOT NULL,
  shared INTEGER NOT NULL,
  type TEXT NOT NULL,
  idx TEXT NOT NULL,
  method TEXT NOT NULL,
  params TEXT NOT NULL,
  search_text TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (owner_id, name_key)
);
CREATE INDEX IF NOT EXISTS reports_owner_seq ON reports (owner_id, seq);
CREATE INDEX IF NOT EXISTS reports_shared_seq ON reports (shared, seq);
CREATE TABLE IF NOT EXISTS report_versions (
  guid TEXT NOT NULL,
  version INTEGER NOT NULL,
  params TEXT NOT NULL,
  index_version INTEGER NOT NULL,
  saved_at TEXT NOT NULL,
  PRIMARY KEY (guid, version)
);
`;

/** Columns report versions added to a reports table made before them; existing reports are version 1. */
const ADDED_COLUMNS: Record<string, string> = {
  version: 'INTEGER NOT NULL DEFAULT 1',
  index_version: 'INTEGER NOT NULL DEFAULT 0',
  deleted_at: 'TEXT',
};

/** A trashed report's name key: unique per report, so the owner may give its name to a new one. */
const trashedKey = (nameKey: string, guid: string) => `${nameKey}\u0000${guid}`;

function toRecord(r: Row): ReportRecord {
  return {
    seq: r.seq,
    guid: r.guid,
    ownerId: r.owner_id,
    ownerName: r.owner_name,
    name: r.name,
    description: r.description,
    folder: r.folder,
    shared: r.shared === 1,
    type: r.type,
    index: r.idx,
    method: r.method,
    params: r.params,
    version: r.version,
    indexVersion: r.index_version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toVersion(r: VersionRow): ReportVersion {
  return { version: r.version, params: r.params, indexVersion: r.index_version, savedAt: r.saved_at };
}

function conflictOf(err: unknown, guid: string, name: string): unknown {
  if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') return err;
  if (String((err as Error).message).includes('guid'))
    return AppError.conflict(`A report with guid ${guid} already exists`);
  return AppError.conflict(`You already have a report named ${quoteInput(name)}`);
}

const escapeLike = (w: string) => w.replace(/[\\%_]/g, '\\$&');

/**
 * The viewer's reports and the shared ones on its readable indexes, as SQL: the filter runs in the query
 * so a page is never cut short by hidden rows. The index list travels as one JSON parameter, so its
 * length never meets SQLite's limit on bound variables.
 */
function visibleTo(viewer: ReportViewer, params: Record<string, string | number>): string {
  params.viewer = viewer.viewerId;
  if (viewer.readableIndexes.includes('*')) return '(owner_id = @viewer OR shared = 1) AND deleted_at IS NULL';
  params.readable = JSON.stringify(viewer.readableIndexes);
  return '(owner_id = @viewer OR (shared = 1 AND idx IN (SELECT value FROM json_each(@readable)))) AND deleted_at IS NULL';
}

/** Reports in the embedded SQLite file; FULL sync so an acknowledged save survives a crash. */
export class SqliteReportStore implements ReportStore {
  private readonly db: Database.Database;
  private readonly insertStmt;
  private readonly insertVersion;
  private readonly byGuid;
  private readonly anyByGuid;

  constructor(file: string) {
    this.db = openSqlite(file);
    // One IMMEDIATE transaction: the column check and the ALTERs must not interleave with another process's.
    this.db
      .transaction(() => {
        this.db.exec(SCHEMA);
        const have = new Set(
          this.db
            .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('reports')")
            .all()
            .map((c) => c.name),
        );
        for (const [column, type] of Object.entries(ADDED_COLUMNS))
          if (!have.has(column)) this.db.exec(`ALTER TABLE reports ADD COLUMN ${column} ${type}`);
        // Reports saved before versions: their params are version 1.
        this.db.exec(`INSERT OR IGNORE INTO report_versions (guid, version, params, index_version, saved_at)
          SELECT guid, version, params, index_version, updated_at FROM reports`);
      })
      .immediate();
    this.insertStmt = this.db.prepare(
      `INSERT INTO reports (guid, owner_id, owner_name, name, name_key, description, folder, shared, type, idx, method, params, version, index_version, search_text, created_at, updated_at)
       VALUES (@guid, @owner_id, @owner_name, @name, @name_key, @description, @folder, @shared, @type, @idx, @method, @params, 1, @index_version, @search_text, @created_at, @updated_at)`,
    );
    this.insertVersion = this.db.prepare(
      'INSERT INTO report_versions (guid, version, params, index_version, saved_at) VALUES (@guid, @version, @params, @index_version, @saved_at)',
    );
    this.byGuid = this.db.prepare<[string], Row>('SELECT * FROM reports WHERE guid = ? AND deleted_at IS NULL');
    this.anyByGuid = this.db.prepare<[string], Row>('SELECT * FROM reports WHERE guid = ?');
  }

  async insert(report: NewReport): Promise<ReportRecord> {
    const now = new Date().toISOString();
    const guid = report.guid ?? randomUUID();
    const created = report.createdAt ?? now;
    const insert = this.db.transaction(() => {
      this.insertStmt.run({
        guid,
        owner_id: report.ownerId,
        owner_name: report.ownerName,
        name: report.name,
        name_key: report.name.toLowerCase(),
        description: report.description,
        folder: report.folder,
        shared: report.shared ? 1 : 0,
        type: report.type,
        idx: report.index,
        method: report.method,
        params: report.params,
        index_version: report.indexVersion ?? 0,
        search_text: searchText(report.name, report.description),
        created_at: created,
        updated_at: report.updatedAt ?? now,
      });
      this.insertVersion.run({
        guid,
        version: 1,
        params: report.params,
        index_version: report.indexVersion ?? 0,
        saved_at: report.updatedAt ?? created,
      });
    });
    try {
      insert.immediate();
    } catch (err) {
      throw conflictOf(err, guid, report.name);
    }
    return toRecord(this.byGuid.get(guid) as Row);
  }

  async versions(guid: string): Promise<ReportVersion[]> {
    if (!this.byGuid.get(guid)) return [];
    return this.db
      .prepare<[string], VersionRow>('SELECT * FROM report_versions WHERE guid = ? ORDER BY version')
      .all(guid)
      .map(toVersion);
  }

  async update(guid: string, change: ReportChange): Promise<ReportRecord> {
    // IMMEDIATE: the write lock is taken before the version is read, so racing updates (in any process)
    // each append their own version.
    const update = this.db.transaction(() => {
      const row = this.byGuid.get(guid);
      if (!row) throw AppError.notFound(`Report ${guid} not found`);
      const now = new Date().toISOString();
      const name = change.name ?? row.name;
      const description = change.description ?? row.description;
      const next = { ...row, name, description, updated_at: now };
      if (change.folder !== undefined) next.folder = change.folder;
      if (change.shared !== undefined) next.shared = change.shared ? 1 : 0;
      if (change.params) {
        next.version = row.version + 1;
        next.params = change.params.params;
        next.index_version = change.params.indexVersion;
        this.insertVersion.run({
          guid,
          version: next.version,
          params: next.params,
          index_version: next.index_version,
          saved_at: now,
        });
      }
      this.db
        .prepare(
          `UPDATE reports SET name = @name, name_key = @name_key, description = @description, folder = @folder,
             shared = @shared, idx = @idx, params = @params, version = @version, index_version = @index_version,
             search_text = @search_text, updated_at = @updated_at WHERE guid = @guid`,
        )
        .run({
          guid,
          name: next.name,
          name_key: next.name.toLowerCase(),
          description: next.description,
          folder: next.folder,
          shared: next.shared,
          idx: next.idx,
          params: next.params,
          version: next.version,
          index_version: next.index_version,
          search_text: searchText(next.name, next.description),
          updated_at: now,
        });
      return next;
    });
    try {
      return toRecord(update.immediate());
    } catch (err) {
      throw conflictOf(err, guid, change.name ?? '');
    }
  }

  async trash(guid: string, deletedAt: string): Promise<void> {
    const row = this.byGuid.get(guid);
    if (!row) throw AppError.notFound(`Report ${guid} not found`);
    const done = this.db
      .prepare('UPDATE reports SET deleted_at = ?, name_key = ? WHERE guid = ? AND deleted_at IS NULL')
      .run(deletedAt, trashedKey(row.name.toLowerCase(), guid), guid);
    if (done.changes === 0) throw AppError.notFound(`Report ${guid} not found`);
  }

  async getTrashed(guid: string): Promise<TrashedReport | null> {
    const row = this.anyByGuid.get(guid);
    return row?.deleted_at ? { report: toRecord(row), deletedAt: row.deleted_at } : null;
  }

  async listTrash(ownerName?: string): Promise<TrashedReport[]> {
    const rows =
      ownerName === undefined
        ? this.db
            .prepare<[], Row>('SELECT * FROM reports WHERE deleted_at IS NOT NULL ORDER BY deleted_at DESC, seq DESC')
            .all()
        : this.db
            .prepare<[string], Row>(
              'SELECT * FROM reports WHERE deleted_at IS NOT NULL AND owner_name = ? ORDER BY deleted_at DESC, seq DESC',
            )
            .all(ownerName);
    return rows.map((row) => ({ report: toRecord(row), deletedAt: row.deleted_at as string }));
  }

  async restore(guid: string): Promise<ReportRecord> {
    const row = this.anyByGuid.get(guid);
    if (!row?.deleted_at) throw AppError.notFound(`Report ${guid} is not in the trash`);
    try {
      this.db
        .prepare('UPDATE reports SET deleted_at = NULL, name_key = ? WHERE guid = ? AND deleted_at IS NOT NULL')
        .run(row.name.toLowerCase(), guid);
    } catch (err) {
      throw conflictOf(err, guid, row.name);
    }
    return toRecord(this.byGuid.get(guid) as Row);
  }

  async purgeTrash(deletedBefore: string): Promise<number> {
    const purge = this.db.transaction(() => {
      this.db
        .prepare(
          'DELETE FROM report_versions WHERE guid IN (SELECT guid FROM reports WHERE deleted_at IS NOT NULL AND deleted_at < ?)',
        )
        .run(deletedBefore);
      return this.db.prepare('DELETE FROM reports WHERE deleted_at IS NOT NULL AND deleted_at < ?').run(deletedBefore)
        .changes;
    });
    return purge.immediate();
  }

  async referencedIndexVersions(index: string): Promise<number[]> {
    return this.db
      .prepare<[string], number>(
        `SELECT DISTINCT v.index_version FROM report_versions v JOIN reports r ON r.guid = v.guid
         WHERE r.idx = ? AND v.index_version > 0 ORDER BY v.index_version`,
      )
      .pluck()
      .all(index) as number[];
  }

  async get(guid: string): Promise<ReportRecord | null> {
    const row = this.byGuid.get(guid);
    return row ? toRecord(row) : null;
  }

  async getVisible(guid: string, viewer: ReportViewer): Promise<ReportRecord | null> {
    const params: Record<string, string | number> = { guid };
    const row = this.db
      .prepare<Record<string, string | number>, Row>(
        `SELECT * FROM reports WHERE guid = @guid AND ${visibleTo(viewer, params)}`,
      )
      .get(params);
    return row ? toRecord(row) : null;
  }

  async find(q: ReportQuery): Promise<ReportRecord[]> {
    const where: string[] = ['deleted_at IS NULL'];
    const params: Record<string, string | number> = {};
    if (q.viewerId !== undefined)
      where.push(visibleTo({ viewerId: q.viewerId, readableIndexes: q.readableIndexes ?? [] }, params));
    if (q.ownerName !== undefined) {
      where.push('owner_name = @ownerName');
      params.ownerName = q.ownerName;
    }
    q.words.forEach((w, i) => {
      where.push(`search_text LIKE @w${i} ESCAPE '\\'`);
      params[`w${i}`] = `% ${escapeLike(w)}%`;
    });
    if (q.types.length) {
      where.push(`type IN (${q.types.map((_, i) => `@t${i}`).join(', ')})`);
      q.types.forEach((t, i) => (params[`t${i}`] = t));
    }
    if (q.beforeSeq !== undefined) {
      where.push('seq < @before');
      params.before = q.beforeSeq;
    }
    params.limit = q.limit;
    const sql = `SELECT * FROM reports WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`;
    return this.db.prepare<Record<string, string | number>, Row>(sql).all(params).map(toRecord);
  }

  async delete(guid: string): Promise<void> {
    const remove = this.db.transaction(() => {
      this.db.prepare('DELETE FROM report_versions WHERE guid = ?').run(guid);
      return this.db.prepare('DELETE FROM reports WHERE guid = ?').run(guid).changes;
    });
    if (remove.immediate() === 0) throw AppError.notFound(`Report ${guid} not found`);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

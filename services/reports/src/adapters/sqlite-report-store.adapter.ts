import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { openSqlite } from '@quarry/metadata-store/sqlite';
import { AppError, quoteInput } from '@quarry/errors';
import { searchText } from '../domain/search-words';
import type { NewReport, ReportQuery, ReportRecord, ReportStore, ReportViewer } from '../ports/report-store.port';

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
  created_at: string;
  updated_at: string;
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
`;

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
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const escapeLike = (w: string) => w.replace(/[\\%_]/g, '\\$&');

/**
 * The viewer's reports and the shared ones on its readable indexes, as SQL: the filter runs in the query
 * so a page is never cut short by hidden rows. The index list travels as one JSON parameter, so its
 * length never meets SQLite's limit on bound variables.
 */
function visibleTo(viewer: ReportViewer, params: Record<string, string | number>): string {
  params.viewer = viewer.viewerId;
  if (viewer.readableIndexes.includes('*')) return '(owner_id = @viewer OR shared = 1)';
  params.readable = JSON.stringify(viewer.readableIndexes);
  return '(owner_id = @viewer OR (shared = 1 AND idx IN (SELECT value FROM json_each(@readable))))';
}

/** Reports in the embedded SQLite file; FULL sync so an acknowledged save survives a crash. */
export class SqliteReportStore implements ReportStore {
  private readonly db: Database.Database;
  private readonly insertStmt;
  private readonly byGuid;

  constructor(file: string) {
    this.db = openSqlite(file);
    this.db.transaction(() => this.db.exec(SCHEMA)).immediate();
    this.insertStmt = this.db.prepare(
      `INSERT INTO reports (guid, owner_id, owner_name, name, name_key, description, folder, shared, type, idx, method, params, search_text, created_at, updated_at)
       VALUES (@guid, @owner_id, @owner_name, @name, @name_key, @description, @folder, @shared, @type, @idx, @method, @params, @search_text, @created_at, @updated_at)`,
    );
    this.byGuid = this.db.prepare<[string], Row>('SELECT * FROM reports WHERE guid = ?');
  }

  async insert(report: NewReport): Promise<ReportRecord> {
    const now = new Date().toISOString();
    const guid = report.guid ?? randomUUID();
    try {
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
        search_text: searchText(report.name, report.description),
        created_at: report.createdAt ?? now,
        updated_at: report.updatedAt ?? now,
      });
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        if (String((err as Error).message).includes('guid'))
          throw AppError.conflict(`A report with guid ${guid} already exists`);
        throw AppError.conflict(`You already have a report named ${quoteInput(report.name)}`);
      }
      throw err;
    }
    return toRecord(this.byGuid.get(guid) as Row);
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
    const where: string[] = [];
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
    const sql = `SELECT * FROM reports ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT @limit`;
    return this.db.prepare<Record<string, string | number>, Row>(sql).all(params).map(toRecord);
  }

  async delete(guid: string): Promise<void> {
    if (this.db.prepare('DELETE FROM reports WHERE guid = ?').run(guid).changes === 0)
      throw AppError.notFound(`Report ${guid} not found`);
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

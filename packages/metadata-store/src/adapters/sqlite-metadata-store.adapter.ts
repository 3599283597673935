import type Database from 'better-sqlite3';
import { ComposedMetadataStore } from './composed-metadata-store';
import { openSqlite } from './open-sqlite';
import { SqliteAuditLog } from './sqlite-audit-log.adapter';
import { SqliteIdentityStore } from './sqlite-identity-store.adapter';
import { SqliteIndexCatalog } from './sqlite-index-catalog.adapter';
import { migrateSqlite } from './sqlite-schema';

/**
 * Embedded metadata on one SQLite file in WAL mode, safe to share between the processes of one machine:
 * one connection, migrated once, that each port's part (identities, catalog, audit) works on.
 */
export class SqliteMetadataStore extends ComposedMetadataStore {
  private readonly db: Database.Database;
  private readonly pingStmt: Database.Statement;

  constructor(file: string) {
    const db = openSqlite(file);
    migrateSqlite(db);
    super(new SqliteIdentityStore(db), new SqliteIndexCatalog(db), new SqliteAuditLog(db));
    this.db = db;
    this.pingStmt = db.prepare('SELECT 1');
  }

  async ping(): Promise<void> {
    this.pingStmt.get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

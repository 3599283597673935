import type Database from 'better-sqlite3';

/** Every table and index of the embedded metadata store; each statement is safe to run again. */
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

/**
 * Creates the tables of a new file and brings an older one up to date. One IMMEDIATE transaction: the
 * column check and the ALTER must not interleave with another process's migration.
 */
export function migrateSqlite(db: Database.Database): void {
  db.transaction(() => {
    db.exec(SCHEMA);
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('indexes')").all();
    if (!columns.some((c) => c.name === 'dropped_at')) db.exec('ALTER TABLE indexes ADD COLUMN dropped_at TEXT');
    // Rollups (JSON), on the live entry and on each kept version: null in files written before them.
    if (!columns.some((c) => c.name === 'rollups')) db.exec('ALTER TABLE indexes ADD COLUMN rollups TEXT');
    // The user who created the index through the API (uploads, sources): null for the CLI's loads.
    if (!columns.some((c) => c.name === 'owner')) db.exec('ALTER TABLE indexes ADD COLUMN owner TEXT');
    // The source run that published the version (JSON), live and kept: null for uploads, the CLI, older files.
    if (!columns.some((c) => c.name === 'origin')) db.exec('ALTER TABLE indexes ADD COLUMN origin TEXT');
    // The snapshot file's SHA-256, live and kept: null for versions written before it was kept.
    if (!columns.some((c) => c.name === 'sha256')) db.exec('ALTER TABLE indexes ADD COLUMN sha256 TEXT');
    // A token's name (TOKENS.CREATE name): null for tokens made before it, and for the CLI's.
    const tokenColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('tokens')").all();
    if (!tokenColumns.some((c) => c.name === 'name')) db.exec('ALTER TABLE tokens ADD COLUMN name TEXT');
    const auditColumns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('audit')").all();
    if (!auditColumns.some((c) => c.name === 'shape')) db.exec('ALTER TABLE audit ADD COLUMN shape TEXT');
    // What an admin call acted on (`user bob`, `token <id>`): null for other calls and older rows.
    if (!auditColumns.some((c) => c.name === 'target')) db.exec('ALTER TABLE audit ADD COLUMN target TEXT');
    const versionColumns = db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('index_versions')")
      .all();
    if (!versionColumns.some((c) => c.name === 'rollups'))
      db.exec('ALTER TABLE index_versions ADD COLUMN rollups TEXT');
    if (!versionColumns.some((c) => c.name === 'origin')) db.exec('ALTER TABLE index_versions ADD COLUMN origin TEXT');
    if (!versionColumns.some((c) => c.name === 'sha256')) db.exec('ALTER TABLE index_versions ADD COLUMN sha256 TEXT');
  }).immediate();
}

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/** How long an opener waits for another process's lock (busy_timeout, and the WAL switch below). */
const BUSY_MS = 5000;

function isBusy(err: unknown): boolean {
  return typeof err === 'object' && err !== null && String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY');
}

/** Blocks this thread for `ms` without spinning (start-up only: a constructor cannot await). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Users, token hashes and reports are the owner's alone: a file made before that rule (0644) is tightened
 * on open. A read-only mount (a reader in a split deployment) or a file of another user stays as it is.
 */
function ownerOnly(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      if ((fs.statSync(f).mode & 0o077) !== 0) fs.chmodSync(f, 0o600);
    } catch {
      // Missing (no WAL yet), read-only or not ours: nothing to tighten here.
    }
  }
}

/**
 * Opens an embedded store's SQLite file in WAL mode, safe when several processes open a fresh file at
 * once (two `quarry index load` on a new install). busy_timeout covers ordinary locks, but SQLite does
 * not call the busy handler while switching the journal mode, so that step is retried here until the
 * same deadline. FULL sync: a write that returned (a publication, a revocation, a saved report) survives
 * a power cut; writes are rare in these stores.
 */
export function openSqlite(file: string): Database.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  if (file !== ':memory:') ownerOnly(file);
  db.pragma(`busy_timeout = ${BUSY_MS}`);
  const deadline = Date.now() + BUSY_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      db.pragma('journal_mode = WAL');
      break;
    } catch (err) {
      if (!isBusy(err) || Date.now() > deadline) {
        db.close();
        throw err;
      }
      sleepSync(wait);
    }
  }
  db.pragma('synchronous = FULL');
  return db;
}

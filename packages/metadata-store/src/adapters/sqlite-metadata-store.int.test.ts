import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metadataStoreConformance } from '../metadata-store.conformance';
import { SqliteMetadataStore } from './sqlite-metadata-store.adapter';

describe('SqliteMetadataStore conformance', () => {
  metadataStoreConformance(
    async () => new SqliteMetadataStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-')), 'quarry.db')),
  );
});

describe('SqliteMetadataStore across connections', () => {
  it('shows a revocation made by another connection (another process) on the next read', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-')), 'quarry.db');
    const a = new SqliteMetadataStore(file);
    const b = new SqliteMetadataStore(file);
    const u = await a.createUser({ name: 'x', admin: false, indexes: [], realms: [] });
    const t = await a.createToken({ userId: u.id, hash: '01'.repeat(32), prefix: 'qk_', scopes: [], expiresAt: null });
    expect((await b.findTokenByHash(t.hash))?.revokedAt).toBeNull();
    expect((await b.findCredential(t.hash))?.owner?.status).toBe('active');
    await a.revokeToken(t.id);
    expect((await b.findTokenByHash(t.hash))?.revokedAt).not.toBeNull();
    expect((await b.findCredential(t.hash))?.token.revokedAt).not.toBeNull();
    await a.setUserStatus('x', 'disabled');
    expect((await b.findCredential(t.hash))?.owner?.status).toBe('disabled');
    await a.close();
    await b.close();
  });
});

describe('SqliteMetadataStore opened by several processes at once', () => {
  it('creates and migrates a fresh file once, every opener succeeding (two `quarry index load` on a new install)', async () => {
    // The built adapter, so that real separate processes race on the schema (npm test builds before jest).
    const built = path.resolve(__dirname, '../../dist/adapters/sqlite-metadata-store.adapter.js');
    expect(fs.existsSync(built)).toBe(true);
    for (let round = 0; round < 10; round += 1) {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-race-')), 'quarry.db');
      const startAt = Date.now() + 400;
      const script = `const { SqliteMetadataStore } = require(${JSON.stringify(built)});
        while (Date.now() < ${startAt}) {}
        const s = new SqliteMetadataStore(${JSON.stringify(file)});
        s.close().then(() => process.exit(0));`;
      const runs = Array.from(
        { length: 8 },
        () =>
          new Promise<{ code: number | null; stderr: string }>((resolve) => {
            const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
            let stderr = '';
            child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
            child.on('close', (code) => resolve({ code, stderr }));
          }),
      );
      const results = await Promise.all(runs);
      expect(results.filter((r) => r.code !== 0).map((r) => r.stderr)).toEqual([]);
      const store = new SqliteMetadataStore(file);
      await store.publishIndex({
        name: 'movies',
        description: '',
        fields: [],
        views: [],
        recordCount: 1,
        snapshot: 'a',
      });
      await store.dropIndex('movies');
      expect(await store.getIndex('movies')).toBeNull();
      await store.close();
    }
    // A hang guard, not a target: 80 processes start (and spin) on 2 loaded cores.
  }, 300_000);
});

describe('SqliteMetadataStore load lock', () => {
  it('frees at once the lock of a process of this host that is gone (a load killed with -9)', async () => {
    const store = new SqliteMetadataStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-')), 'quarry.db'));
    // A real process that has exited: its pid is free (pids are not reused this quickly).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(dead.stdout.toString());
    await store.acquireLoadLock('movies', { id: 'crashed', host: os.hostname(), pid: deadPid }, 3_600_000);
    const lock = await store.acquireLoadLock('movies', { id: 'next', host: os.hostname(), pid: process.pid }, 60_000);
    await lock.release();
    // A live process on this host keeps its lock for the whole lease.
    await store.acquireLoadLock('airports', { id: 'live', host: os.hostname(), pid: process.ppid }, 3_600_000);
    await expect(
      store.acquireLoadLock('airports', { id: 'x', host: os.hostname(), pid: process.pid }, 60_000),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    await store.close();
  });

  it('keeps the tombstone of an index dropped before an upgrade-era schema (dropped_at added in place)', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-meta-')), 'quarry.db');
    const Database = (await import('better-sqlite3')).default;
    const old = new Database(file);
    old.exec(`CREATE TABLE indexes (name TEXT PRIMARY KEY, description TEXT NOT NULL, fields TEXT NOT NULL, views TEXT NOT NULL,
      record_count INTEGER NOT NULL, version INTEGER NOT NULL, snapshot TEXT NOT NULL, updated_at TEXT NOT NULL)`);
    old
      .prepare(
        "INSERT INTO indexes VALUES ('movies', '', '[]', '[]', 1, 7, 'indexes/movies/a.parquet', '2026-01-01T00:00:00.000Z')",
      )
      .run();
    old.close();
    const store = new SqliteMetadataStore(file);
    expect((await store.getIndex('movies'))?.version).toBe(7);
    await store.dropIndex('movies');
    expect(
      (
        await store.publishIndex({
          name: 'movies',
          description: '',
          fields: [],
          views: [],
          recordCount: 1,
          snapshot: 'b',
        })
      ).entry.version,
    ).toBe(8);
    await store.close();
  });
});

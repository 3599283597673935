import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { reportStoreConformance } from '../report-store.conformance';
import Database from 'better-sqlite3';
import { SqliteReportStore } from './sqlite-report-store.adapter';

describe('SqliteReportStore conformance', () => {
  reportStoreConformance(
    async () => new SqliteReportStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-reports-')), 'quarry.db')),
  );
});

describe('SqliteReportStore across processes', () => {
  it('loses no version when four processes update one report at once', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-reports-race-')), 'quarry.db');
    const store = new SqliteReportStore(file);
    const saved = await store.insert({
      ownerId: 'u1',
      ownerName: 'ann',
      name: 'raced',
      description: '',
      folder: '',
      shared: false,
      type: 'query',
      index: 'movies',
      method: 'QUERIES.EXECUTE',
      params: '{"n":0}',
    });
    // Each process holds its own connection, as gateway replicas and the CLI do; the built adapter runs there.
    const adapter = path.join(__dirname, '../../dist/adapters/sqlite-report-store.adapter.js');
    const script = `
      const { SqliteReportStore } = require(${JSON.stringify(adapter)});
      const store = new SqliteReportStore(process.argv[1]);
      (async () => {
        for (let i = 0; i < 10; i++)
          await store.update(process.argv[2], { params: { params: JSON.stringify({ w: process.argv[3], i }), indexVersion: 1 } });
        await store.close();
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const codes = await Promise.all(
      [0, 1, 2, 3].map(
        (w) =>
          new Promise<number | null>((resolve) =>
            spawn(process.execPath, ['-e', script, file, saved.guid, String(w)], { stdio: 'inherit' }).on(
              'exit',
              resolve,
            ),
          ),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0]);
    const versions = await store.versions(saved.guid);
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    const written = versions.slice(1).map((v) => v.params);
    expect(new Set(written).size).toBe(40);
    expect((await store.get(saved.guid))?.version).toBe(41);
    await store.close();
  }, 60000);

  it('makes reports saved before versions version 1 of themselves', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'q-reports-old-')), 'quarry.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE reports (seq INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL UNIQUE, owner_id TEXT NOT NULL,
      owner_name TEXT NOT NULL, name TEXT NOT NULL, name_key TEXT NOT NULL, description TEXT NOT NULL, folder TEXT NOT NULL,
      shared INTEGER NOT NULL, type TEXT NOT NULL, idx TEXT NOT NULL, method TEXT NOT NULL, params TEXT NOT NULL,
      search_text TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (owner_id, name_key))`);
    old
      .prepare(
        `INSERT INTO reports (guid, owner_id, owner_name, name, name_key, description, folder, shared, type, idx, method, params, search_text, created_at, updated_at)
         VALUES ('5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c', 'u1', 'ann', 'Old', 'old', '', '', 0, 'query', 'movies', 'QUERIES.EXECUTE', '{"q":1}', ' old', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z')`,
      )
      .run();
    old.close();
    const store = new SqliteReportStore(file);
    const guid = '5a3e1c2b-7d4f-4e8a-9b6c-0d1e2f3a4b5c';
    expect(await store.get(guid)).toMatchObject({ version: 1, indexVersion: 0, params: '{"q":1}' });
    expect(await store.versions(guid)).toEqual([
      { version: 1, params: '{"q":1}', indexVersion: 0, savedAt: '2026-01-02T00:00:00.000Z' },
    ]);
    expect((await store.update(guid, { params: { params: '{"q":2}', indexVersion: 3 } })).version).toBe(2);
    await store.close();
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { IndexEntry } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { DuckDbSnapshotBuilder } from '../adapters/duckdb/duckdb-snapshot-builder.adapter';
import type { SearchIndex } from '../ports/search-index.port';
import type { LoadReport } from '../ports/snapshot-builder.port';
import { LoadIndexUseCase } from './load-index.use-case';

/**
 * The same guarantee for every engine that receives the rows: when the search engine's import fails
 * half-way (Typesense answering an error for some documents, or going away), nothing is published, the
 * previous version keeps serving, and the new snapshot does not stay behind.
 */
describe('LoadIndexUseCase when the search engine fails to take the rows', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-load-'));
  const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
  let failPrepare: Error | undefined;
  const prepared: number[] = [];
  const search = {
    prepare: async (entry: IndexEntry) => {
      prepared.push(entry.version);
      if (failPrepare) throw failPrepare;
    },
    retire: async () => undefined,
    drop: async () => undefined,
    forget: () => undefined,
  } as unknown as SearchIndex;
  const loader = new LoadIndexUseCase(new DuckDbSnapshotBuilder(dir), store, search);
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const load = (file: string) => loader.loadIndex({ name: 'kv', file, description: '', types: {}, views: [] });
  afterAll(() => {
    void store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('publishes nothing and keeps the previous version and its file', async () => {
    const first = await load(write('a.csv', 'k,v\na,1\n'));
    expect(first.entry.version).toBe(1);
    failPrepare = new Error('import failed for 1 of 2 documents');
    await expect(load(write('b.csv', 'k,v\nb,2\nc,3\n'))).rejects.toThrow('import failed for 1 of 2 documents');
    expect(prepared).toEqual([1, 2]);
    const now = await store.getIndex('kv');
    expect({ version: now?.version, records: now?.recordCount, snapshot: now?.snapshot }).toEqual({
      version: 1,
      records: 1,
      snapshot: first.entry.snapshot,
    });
    expect(fs.existsSync(path.join(dir, first.entry.snapshot))).toBe(true);
    // The lock was released: the next load goes through and takes the next version.
    failPrepare = undefined;
    const third = await load(write('c.csv', 'k,v\nd,4\n'));
    expect(third.entry.version).toBe(2);
    // Only the published versions' files remain: the failed load's snapshot went with the next prune.
    expect(fs.readdirSync(path.join(dir, 'indexes', 'kv')).sort()).toEqual(
      [first.entry.snapshot, third.entry.snapshot].map((s) => path.basename(s)).sort(),
    );
  });
});

/** Upserts, loads that create their index, owners and the report a failed load leaves. */
describe('LoadIndexUseCase merging loads', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-upsert-'));
  const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
  const search = {
    prepare: async () => undefined,
    retire: async () => undefined,
    drop: async () => undefined,
    forget: () => undefined,
  } as unknown as SearchIndex;
  const loader = new LoadIndexUseCase(new DuckDbSnapshotBuilder(dir), store, search);
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const records = async (snapshot: string) => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const sql = `SELECT * FROM read_parquet('${path.join(dir, snapshot).replace(/'/g, "''")}')`;
      return (await c.runAndReadAll(sql)).getRowObjectsJS().map((r) => [String(r.id), r.name]);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  };

  afterAll(() => {
    void store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('upserts onto a name with no version as a first load when asked to create it, then replaces by key', async () => {
    const upsert = (file: string, extra: { createIfMissing?: boolean; owner?: string } = {}) =>
      loader.loadIndex({
        name: 'people',
        file,
        description: '',
        types: {},
        views: [],
        upsert: { key: 'id' },
        ...extra,
      });
    await expect(upsert(write('p0.csv', 'id,name\n1,a\n'))).rejects.toThrow(
      'An upsert needs a published version of "people"; load it once first',
    );
    expect(await store.getIndex('people')).toBeNull();
    const first = await upsert(write('p1.csv', 'id,name\n1,a\n2,b\n'), { createIfMissing: true, owner: 'alice' });
    expect({ version: first.entry.version, records: first.entry.recordCount, replaced: first.replaced }).toEqual({
      version: 1,
      records: 2,
      replaced: 0,
    });
    expect(first.entry.owner).toBe('alice');
    // Another user's upsert keeps the creator as the owner.
    const second = await upsert(write('p2.csv', 'id,name\n2,B\n3,c\n'), { createIfMissing: true, owner: 'bob' });
    expect({ version: second.entry.version, records: second.entry.recordCount, replaced: second.replaced }).toEqual({
      version: 2,
      records: 3,
      replaced: 1,
    });
    expect((await store.getIndex('people'))?.owner).toBe('alice');
    expect(await records(second.entry.snapshot)).toEqual([
      ['1', 'a'],
      ['2', 'B'],
      ['3', 'c'],
    ]);
  });

  it('keeps the refusal of an append onto nothing unless asked to create, and then loads it', async () => {
    const append = (createIfMissing?: boolean) =>
      loader.loadIndex({
        name: 'fresh',
        file: write('f.csv', 'id,name\n1,a\n'),
        description: '',
        types: {},
        views: [],
        append: true,
        createIfMissing,
      });
    await expect(append()).rejects.toThrow(
      '--append needs a published version of "fresh"; load it once without --append',
    );
    const created = await append(true);
    expect({ version: created.entry.version, records: created.entry.recordCount }).toEqual({ version: 1, records: 1 });
    expect(created.entry.owner).toBeUndefined();
  });

  it('fills the report of a load that fails, and lists the rejected rows of one that skips', async () => {
    const report: LoadReport = { rejected: 0, rejects: [] };
    const input = { name: 'rep', description: '', types: {}, views: [], upsert: { key: 'id' }, createIfMissing: true };
    await expect(loader.loadIndex({ ...input, file: write('r1.csv', 'id,name\n1,a\n1,b\n'), report })).rejects.toThrow(
      /^r1\.csv:3, column "id": repeats the key id="1" of line 2/,
    );
    expect(report).toEqual({
      rowsRead: 2,
      rejected: 1,
      rejects: [{ line: 3, column: 'id', reason: 'repeats the key id="1" of line 2', text: '{"id":1,"name":"b"}' }],
    });
    const skipped = await loader.loadIndex({
      ...input,
      file: write('r2.csv', 'id,name\n1,a\n1,b\n'),
      onError: 'skip',
      report,
    });
    expect({ read: skipped.rowsRead, rejected: skipped.rowsRejected, listed: skipped.rejects }).toEqual({
      read: 2,
      rejected: 1,
      listed: report.rejects,
    });
    expect(skipped.rejects?.[0].line).toBe(3);
  });
});

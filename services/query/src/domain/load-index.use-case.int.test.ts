import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { DuckDbSnapshotBuilder } from '../adapters/duckdb/duckdb-snapshot-builder.adapter';
import type { SearchIndex } from '../ports/search-index.port';
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

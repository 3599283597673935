import fs from 'node:fs';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { buildSnapshot } from '@quarry/snapshots';

/**
 * For readiness tests (issue #30 item 2): a store in `dir` with two published indexes, "large" attached
 * from its DuckDB file and "small" read into memory, and a view of it whose listing waits for `open()`,
 * so a process started on it is still opening its indexes until the test says.
 */
export async function gatedCatalog(
  dir: string,
): Promise<{ store: SqliteMetadataStore; catalog: SqliteMetadataStore; open: () => void }> {
  const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
  const file = path.join(dir, 'towns.json');
  fs.writeFileSync(file, JSON.stringify([{ town: 'Oslo' }, { town: 'Rome' }]));
  for (const [name, attach] of [
    ['large', true],
    ['small', false],
  ] as const) {
    const built = await buildSnapshot({
      name,
      file,
      dataDir: dir,
      types: {},
      views: [],
      attachMinRecords: attach ? 0 : Infinity,
    });
    await store.publishIndex({ name, description: '', views: [], ...built });
  }
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const catalog = Object.assign(Object.create(store) as SqliteMetadataStore, {
    listIndexes: async (): Promise<IndexEntry[]> => {
      await gate;
      return store.listIndexes();
    },
  });
  return { store, catalog, open };
}

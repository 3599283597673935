import { listing } from './listing';
import type { IndexCatalog } from '@quarry/metadata-store';

/** Its own module: listing reads the catalog only, so it loads none of what a load needs (DuckDB, services). */
export async function listIndexes(catalog: IndexCatalog): Promise<string> {
  const all = await catalog.listIndexes();
  if (all.length === 0) return 'no indexes';
  return listing(
    ['name', 'version', 'records', 'updated', 'description'],
    all.map((e) => [e.name, `v${e.version}`, `${e.recordCount} records`, e.updatedAt, e.description]),
  );
}

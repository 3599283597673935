import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { indexNotFound, mayRead, type FieldDef, type Reader } from '@quarry/query-language';
import { INDEX_NAME } from '@quarry/contract';

/**
 * The published entry of an index the reader may read; unknown and forbidden look alike (404).
 * `onUnpublished` hears of a readable name the catalog no longer has (dropped), so the caller can free
 * what it still holds for it.
 */
export async function readableIndex(
  catalog: IndexCatalog,
  reader: Reader,
  name: string,
  onUnpublished?: (name: string) => void,
): Promise<IndexEntry> {
  if (name.trim() === '') throw AppError.invalid('index is required');
  // No index can bear this name: unknown without asking the catalog, and quoted cut short, since a
  // hostile name may be a megabyte. Same answer as for any other unknown or unreadable index.
  if (!INDEX_NAME.test(name)) throw AppError.notFound(`Index ${quoteInput(name)} not found`);
  if (!mayRead(reader, name)) throw indexNotFound(name);
  const entry = await catalog.getIndex(name);
  if (!entry) {
    onUnpublished?.(name);
    throw indexNotFound(name);
  }
  return entry;
}

export function fieldsOf(entry: IndexEntry): FieldDef[] {
  return entry.fields as FieldDef[];
}

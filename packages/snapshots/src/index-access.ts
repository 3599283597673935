import { AppError } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { indexNotFound, mayRead, type FieldDef, type Reader } from '@quarry/query-language';

/** The published entry of an index the reader may read; unknown and forbidden look alike (404). */
export async function readableIndex(catalog: IndexCatalog, reader: Reader, name: string): Promise<IndexEntry> {
  if (name.trim() === '') throw AppError.invalid('index is required');
  const entry = mayRead(reader, name) ? await catalog.getIndex(name) : null;
  if (!entry) throw indexNotFound(name);
  return entry;
}

export function fieldsOf(entry: IndexEntry): FieldDef[] {
  return entry.fields as FieldDef[];
}

import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { indexNotFound, mayRead, type FieldDef, type Reader } from '@quarry/query-language';
import { INDEX_NAME } from '@quarry/contract';

export interface ReadableIndexOptions {
  /** Hears of a readable name the catalog no longer has (dropped), so the caller can free what it holds for it. */
  onUnpublished?: (name: string) => void;
  /** A version published earlier (a saved report's snapshot) instead of the current one. */
  version?: number;
}

/**
 * The published entry of an index the reader may read; unknown and forbidden look alike (404). With
 * `version`, that version's entry while its snapshot is kept; one no longer kept is a 404 naming it.
 */
export async function readableIndex(
  catalog: IndexCatalog,
  reader: Reader,
  name: string,
  options: ReadableIndexOptions = {},
): Promise<IndexEntry> {
  const { onUnpublished, version } = options;
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
  if (version === undefined || version === entry.version) return entry;
  const past = version < entry.version ? await catalog.getIndexVersion(name, version) : null;
  if (!past)
    throw AppError.notFound(
      `Version ${version} of index ${quoteInput(name)} is no longer kept (the current version is ${entry.version})`,
    );
  return past;
}

export function fieldsOf(entry: IndexEntry): FieldDef[] {
  return entry.fields as FieldDef[];
}

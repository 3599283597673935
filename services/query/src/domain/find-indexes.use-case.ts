import { AppError } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import type { CursorCodec } from '@quarry/paging';
import { isRestricted, mayRead, type Reader } from '@quarry/query-language';

import { DEFAULT_INDEX_LIMIT, MAX_INDEX_LIMIT } from '@quarry/contract';

export interface IndexSummary {
  name: string;
  description: string;
  recordCount: number;
  fields: Array<{ name: string; type: string }>;
  dynamicViews: string[];
  updatedAt: string;
}

function summary(e: IndexEntry): IndexSummary {
  return {
    name: e.name,
    description: e.description,
    recordCount: e.recordCount,
    fields: e.fields.map((f) => ({ name: f.name, type: f.type })),
    dynamicViews: ['Records', ...e.views.map((v) => v.name)],
    updatedAt: e.updatedAt,
  };
}

/** Counts the records of an index a restricted reader may read (its realms applied). */
export type CountReadable = (reader: Reader, entry: IndexEntry) => Promise<number>;

/**
 * INDEXES.FIND: the readable indexes by name, filtered by text, in signed-cursor pages. A caller whose
 * realms restrict an index sees the count of the records it may read, never the index's own.
 */
export class FindIndexesUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly cursors: CursorCodec,
  ) {}

  async find(
    reader: Reader,
    input: { searchText?: string; cursor?: string; limit?: number },
    countReadable: CountReadable,
  ): Promise<{ indexes: IndexSummary[]; nextCursor: string | null }> {
    const limit = input.limit ?? DEFAULT_INDEX_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_INDEX_LIMIT)
      throw AppError.invalid(`limit must be an integer between 1 and ${MAX_INDEX_LIMIT}`);
    const needle = (input.searchText ?? '').trim().toLowerCase();
    const after = input.cursor ? String(this.cursors.decode('indexes', input.cursor, { s: needle }).after) : null;
    const visible = (await this.catalog.listIndexes()).filter(
      (e) =>
        mayRead(reader, e.name) &&
        (needle === '' || e.name.toLowerCase().includes(needle) || e.description.toLowerCase().includes(needle)) &&
        (after === null || e.name > after),
    );
    const page = visible.slice(0, limit);
    const more = visible.length > limit;
    const indexes = await Promise.all(
      page.map(async (e) =>
        isRestricted(reader, e.name) ? { ...summary(e), recordCount: await countReadable(reader, e) } : summary(e),
      ),
    );
    return {
      indexes,
      nextCursor: more ? this.cursors.encode('indexes', { after: page[page.length - 1].name, s: needle }) : null,
    };
  }
}

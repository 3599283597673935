import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { buildSnapshot, pruneSnapshots } from '@quarry/snapshots';
import type { DateGrain, FieldType } from '@quarry/query-language';
import type { SearchIndex } from '../ports/search-index.port';

export interface LoadIndexInput {
  name: string;
  file: string;
  description: string;
  types: Record<string, FieldType>;
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  onProgress?: (fraction: number) => void;
}

/**
 * `quarry index load`: build an immutable snapshot, make it searchable, then publish it in one atomic
 * catalog write. A failure before the publish leaves the published version as it was.
 */
export class LoadIndexUseCase {
  constructor(
    private readonly dataDir: string,
    private readonly catalog: IndexCatalog,
    private readonly search: SearchIndex,
  ) {}

  async execute(input: LoadIndexInput): Promise<IndexEntry> {
    const built = await buildSnapshot({
      name: input.name,
      file: input.file,
      dataDir: this.dataDir,
      types: input.types,
      grains: input.grains,
      views: input.views,
      onProgress: input.onProgress,
    });
    const current = await this.catalog.getIndex(input.name);
    const candidate: IndexEntry = {
      name: input.name,
      description: input.description || current?.description || '',
      fields: built.fields,
      views: input.views,
      recordCount: built.recordCount,
      snapshot: built.snapshot,
      version: (current?.version ?? 0) + 1,
      updatedAt: new Date().toISOString(),
    };
    await this.search.prepare(candidate);
    const { entry, previous } = await this.catalog.publishIndex({
      name: candidate.name,
      description: candidate.description,
      fields: candidate.fields,
      views: candidate.views,
      recordCount: candidate.recordCount,
      snapshot: candidate.snapshot,
    });
    await this.search.retire(entry, previous);
    // Keep the previous file: a process may still be loading it; older ones go.
    pruneSnapshots(this.dataDir, entry.name, [entry.snapshot, ...(previous ? [previous.snapshot] : [])]);
    return entry;
  }

  async drop(name: string): Promise<IndexEntry> {
    const entry = await this.catalog.dropIndex(name);
    await this.search.drop(entry);
    pruneSnapshots(this.dataDir, name, []);
    return entry;
  }
}

import type { IndexEntry } from '@quarry/metadata-store';
import { buildSnapshot } from '@quarry/snapshots';

/** Builds a snapshot from a file and returns it as version 1 of a published index, as the stores would. */
export async function builtEntry(req: Parameters<typeof buildSnapshot>[0]): Promise<IndexEntry> {
  const built = await buildSnapshot(req);
  return {
    name: req.name,
    description: '',
    fields: built.fields,
    views: req.views,
    recordCount: built.recordCount,
    version: 1,
    snapshot: built.snapshot,
    updatedAt: '',
  };
}

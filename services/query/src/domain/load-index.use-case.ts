import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { IndexCatalog, IndexEntry, LoadLock } from '@quarry/metadata-store';
import type { DateGrain, FieldType } from '@quarry/query-language';
import type { SearchIndex } from '../ports/search-index.port';
import type { SnapshotBuilder } from '../ports/snapshot-builder.port';

export interface LoadIndexInput {
  name: string;
  file: string;
  description: string;
  types: Record<string, FieldType>;
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  onProgress?: (fraction: number) => void;
}

/** How long a load lock lasts without a heartbeat: a loader that hangs frees the name after this. */
export const LOAD_LEASE_MS = 60_000;

/**
 * `quarry index load`: build an immutable snapshot, make it searchable, then publish it in one atomic
 * catalog write. A failure before the publish leaves the published version as it was.
 * Loads and drops of one name are serialised by the catalog's load lock (a second one is refused
 * with a message naming the first), so pruning never deletes another load's files.
 */
export class LoadIndexUseCase {
  constructor(
    private readonly snapshots: SnapshotBuilder,
    private readonly catalog: IndexCatalog,
    private readonly search: SearchIndex,
    private readonly leaseMs = LOAD_LEASE_MS,
  ) {}

  /** Runs `work` holding the name's lock, renewed in the background; refuses to publish once it was lost. */
  private async locked<T>(name: string, work: (stillHeld: () => void) => Promise<T>): Promise<T> {
    const lock: LoadLock = await this.catalog.acquireLoadLock(
      name,
      { id: randomUUID(), host: os.hostname(), pid: process.pid },
      this.leaseMs,
    );
    let lost: unknown;
    const heartbeat = setInterval(
      () => {
        lock.renew().catch((err: unknown) => (lost ??= err));
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    heartbeat.unref();
    try {
      return await work(() => {
        if (lost !== undefined) throw lost;
      });
    } finally {
      clearInterval(heartbeat);
      await lock.release();
    }
  }

  loadIndex(input: LoadIndexInput): Promise<IndexEntry> {
    return this.locked(input.name, (stillHeld) => this.load(input, stillHeld));
  }

  private async load(input: LoadIndexInput, stillHeld: () => void): Promise<IndexEntry> {
    const built = await this.snapshots.build({
      name: input.name,
      file: input.file,
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
    stillHeld();
    const { entry, previous } = await this.catalog.publishIndex({
      name: candidate.name,
      description: candidate.description,
      fields: candidate.fields,
      views: candidate.views,
      recordCount: candidate.recordCount,
      snapshot: candidate.snapshot,
    });
    await this.search.retire(entry, previous);
    // Keep the previous file: a process may still be loading it; older ones go, and so do the
    // temporary files of loads that crashed (only this lock's holder may touch the folder).
    this.snapshots.prune(entry.name, [entry.snapshot, ...(previous ? [previous.snapshot] : [])]);
    return entry;
  }

  drop(name: string): Promise<IndexEntry> {
    return this.locked(name, async () => {
      const entry = await this.catalog.dropIndex(name);
      await this.search.drop(entry);
      this.snapshots.prune(name, []);
      return entry;
    });
  }
}

import { randomUUID } from 'node:crypto';
import { abortReason, AppError } from '@quarry/errors';
import os from 'node:os';
import type { IndexCatalog, IndexEntry, IndexOrigin, LoadLock, RollupDef } from '@quarry/metadata-store';
import type { DateGrain, FieldType } from '@quarry/query-language';
import { fieldsOf } from '@quarry/snapshots/access';
import type { SearchIndex } from '../ports/search-index.port';
import type {
  BuiltSnapshotInfo,
  LoadReport,
  SnapshotBuilder,
  SnapshotRetention,
  SourceOptions,
} from '../ports/snapshot-builder.port';

export interface LoadIndexInput extends SourceOptions {
  name: string;
  file: string;
  description: string;
  types: Record<string, FieldType>;
  grains?: Record<string, DateGrain>;
  views: Array<{ name: string; field: string }>;
  /** Publish the current version's rows followed by the file's (same fields). */
  append?: boolean;
  /** Like append, but the file's rows replace the current rows with the same `key` value. */
  upsert?: { key: string };
  /** With append or upsert: a name with no version yet is loaded as a first load instead of refused. */
  createIfMissing?: boolean;
  /** Who creates the index when this load does (an API user); a published index keeps its owner. */
  owner?: string;
  /** The source run this load is (published with the version); absent for uploads and the CLI. */
  origin?: IndexOrigin;
  /** Filled as the load goes: what a failed load still reports (rows read, rejected rows). */
  report?: LoadReport;
  /**
   * Throws when the caller may not write the name as it is now: asked under the load lock, so an index
   * created a moment ago by someone else is seen (two users creating one name cannot both own it).
   */
  authorize?: (current: IndexEntry | null) => void;
  /** Aborted (the uploader went away): nothing is published, whatever was built. */
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** What a load published, and how every row of the source was accounted for. */
export interface LoadResult {
  entry: IndexEntry;
  rowsRead: number;
  rowsRejected: number;
  /** The first 100 rejected rows, when any were. */
  rejects?: BuiltSnapshotInfo['rejects'];
  /** With upsert: the previous version's rows the file replaced. */
  replaced?: number;
  rejectsFile?: string;
  unreadLines?: number;
  typeNotes?: BuiltSnapshotInfo['typeNotes'];
  /** Rollups of the index this load dropped: a field they read is gone. */
  droppedRollups?: BuiltSnapshotInfo['droppedRollups'];
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
    /** Absent: only the current and previous versions are kept. */
    private readonly retention?: SnapshotRetention,
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

  loadIndex(input: LoadIndexInput): Promise<LoadResult> {
    return this.locked(input.name, (stillHeld) => this.load(input, stillHeld));
  }

  private async load(input: LoadIndexInput, stillHeld: () => void): Promise<LoadResult> {
    // Under the lock the next version number is ours: the rejects file can be named after it.
    const current = await this.catalog.getIndex(input.name);
    input.authorize?.(current);
    if (!current && !input.createIfMissing) {
      if (input.upsert)
        throw AppError.invalid(`An upsert needs a published version of "${input.name}"; load it once first`);
      if (input.append)
        throw AppError.invalid(`--append needs a published version of "${input.name}"; load it once without --append`);
    }
    // Onto nothing, an append or upsert is a first load (an upsert still refuses empty or repeated keys).
    const merging = (input.append === true || input.upsert !== undefined) && current !== null;
    const version = (current?.version ?? 0) + 1;
    const owner = current?.owner ?? input.owner;
    const built = await this.snapshots.build({
      name: input.name,
      file: input.file,
      types: input.types,
      grains: input.grains,
      // Appending keeps the published views unless new ones are given.
      views: merging && input.views.length === 0 && current ? current.views : input.views,
      onProgress: input.onProgress,
      format: input.format,
      label: input.label,
      onError: input.onError,
      maxErrors: input.maxErrors,
      encoding: input.encoding,
      dateFormat: input.dateFormat,
      rejectsFile: this.snapshots.rejectsFile(input.name, version),
      ...(merging && current ? { append: { snapshot: current.snapshot, fields: fieldsOf(current) } } : {}),
      ...(input.upsert ? { upsert: input.upsert } : {}),
      ...(input.report ? { report: input.report } : {}),
      ...(current?.rollups?.length ? { rollups: current.rollups } : {}),
    });
    const candidate: IndexEntry = {
      name: input.name,
      description: input.description || current?.description || '',
      fields: built.fields,
      views: merging && input.views.length === 0 && current ? current.views : input.views,
      recordCount: built.recordCount,
      snapshot: built.snapshot,
      sha256: built.sha256,
      version,
      updatedAt: new Date().toISOString(),
      ...(built.rollups?.length ? { rollups: built.rollups } : {}),
      // The catalog clears an owner a publish leaves out: a reload by anyone keeps the creator's.
      ...(owner !== undefined ? { owner } : {}),
      ...(input.origin ? { origin: input.origin } : {}),
    };
    const { entry } = await this.publish(candidate, () => {
      stillHeld();
      if (input.signal?.aborted) throw abortReason(input.signal);
    });
    return {
      entry,
      rowsRead: built.rowsRead,
      rowsRejected: built.rowsRejected,
      ...(built.rejects?.length ? { rejects: built.rejects } : {}),
      ...(built.replaced !== undefined ? { replaced: built.replaced } : {}),
      ...(built.rejectsFile ? { rejectsFile: built.rejectsFile } : {}),
      ...(built.unreadLines ? { unreadLines: built.unreadLines } : {}),
      ...(built.typeNotes ? { typeNotes: built.typeNotes } : {}),
      ...(built.droppedRollups ? { droppedRollups: built.droppedRollups } : {}),
    };
  }

  /** Makes a built candidate searchable, publishes it, then retires and prunes what it replaces. */
  private async publish(candidate: IndexEntry, stillHeld: () => void) {
    await this.search.prepare(candidate);
    stillHeld();
    const { entry, previous } = await this.catalog.publishIndex({
      name: candidate.name,
      description: candidate.description,
      fields: candidate.fields,
      views: candidate.views,
      recordCount: candidate.recordCount,
      snapshot: candidate.snapshot,
      ...(candidate.sha256 ? { sha256: candidate.sha256 } : {}),
      ...(candidate.rollups?.length ? { rollups: candidate.rollups } : {}),
      ...(candidate.owner !== undefined ? { owner: candidate.owner } : {}),
      ...(candidate.origin ? { origin: candidate.origin } : {}),
    });
    // Keep the previous version: a process may still be loading it; older ones go unless saved reports run
    // on them, and so do the temporary files of loads that crashed (only this lock's holder may touch the folder).
    const kept = await this.keepForReports(entry, previous);
    await this.search.retire(entry, previous, kept);
    this.snapshots.prune(entry.name, [
      entry.snapshot,
      ...(previous ? [previous.snapshot] : []),
      ...kept.map((k) => k.snapshot),
    ]);
    return { entry, previous, kept };
  }

  /**
   * Publishes the current version's records again with the rollups `change` returns built in (each is
   * built at once; one that fails publishes nothing). Dropping the last ones keeps the snapshot as is.
   */
  changeRollups(name: string, change: (current: IndexEntry) => RollupDef[]): Promise<IndexEntry> {
    return this.locked(name, async (stillHeld) => {
      const current = await this.catalog.getIndex(name);
      if (!current) throw AppError.notFound(`Index "${name}" not found`);
      const rollups = change(current);
      const kept = current.rollups ?? [];
      // A drop needs no build: the version's file keeps the dropped table, which nothing matches any more.
      const dropOnly = rollups.every((r) => kept.some((k) => k.name === r.name));
      const snapshot = dropOnly
        ? current.snapshot
        : await this.snapshots.withRollups(current.snapshot, fieldsOf(current), rollups);
      const { version: _v, updatedAt: _u, rollups: _r, ...rest } = current;
      const { entry } = await this.publish(
        {
          ...rest,
          snapshot,
          version: current.version + 1,
          updatedAt: new Date().toISOString(),
          ...(rollups.length ? { rollups } : {}),
        },
        stillHeld,
      );
      return entry;
    });
  }

  /**
   * Earlier versions that saved reports were saved on, newest first, while they fit in the budget; every
   * other earlier version (unreferenced ones first of all) is released from the catalog before its file
   * goes, so asOf "saved" on it answers "no longer kept" instead of failing to read a file.
   */
  private async keepForReports(entry: IndexEntry, previous: IndexEntry | null): Promise<IndexEntry[]> {
    const older = (await this.catalog.listIndexVersions(entry.name))
      .filter((v) => v.version !== entry.version && v.version !== previous?.version)
      .sort((a, b) => b.version - a.version);
    const referenced = new Set(this.retention ? await this.retention.referencedVersions(entry.name) : []);
    const kept: IndexEntry[] = [];
    const released: number[] = [];
    let used = 0;
    for (const v of older) {
      const size = referenced.has(v.version) ? this.snapshots.sizeOf(v.snapshot) : 0;
      if (size > 0 && this.retention && used + size <= this.retention.keepBytes) {
        used += size;
        kept.push(v);
      } else released.push(v.version);
    }
    if (released.length) await this.catalog.releaseIndexVersions(entry.name, released);
    return kept;
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

import type { ClientSession, Collection, MongoClient } from 'mongodb';
import { AppError } from '@quarry/errors';
import type { IndexCatalog, IndexEntry, IndexPublication, LoadLock, LoadLockHolder } from '../ports/index-catalog.port';
import { holderIsLive, LOCK_RETRY_S, lockHeldMessage } from './lock-holder';
import { isDuplicateKey, type IndexDoc, type IndexVersionDoc, type LockDoc } from './mongo-collections';

function toIndex({ _id: _ignored, droppedAt: _dropped, ...rest }: IndexDoc): IndexEntry {
  return rest;
}

function versionEntry({ _id: _ignored, ...rest }: IndexVersionDoc): IndexEntry {
  return rest;
}

const LIVE = { droppedAt: null };

/** The index catalog, its kept versions and the load locks (the IndexCatalog port) on MongoDB. */
export class MongoIndexCatalog implements IndexCatalog {
  constructor(
    private readonly client: MongoClient,
    private readonly indexes: Collection<IndexDoc>,
    private readonly versions: Collection<IndexVersionDoc>,
    private readonly locks: Collection<LockDoc>,
    /** A replica set or mongos: a publish's two writes go in one transaction. */
    private readonly transactions: boolean,
  ) {}

  async publishIndex(entry: IndexPublication): Promise<{ entry: IndexEntry; previous: IndexEntry | null }> {
    if (!this.transactions) return this.publishWrites(entry);
    // The live pointer and its version document together: a crash between two separate writes left the
    // live version without the document saved reports and INDEXES.VERSIONS read.
    return this.client.withSession((session) => session.withTransaction(() => this.publishWrites(entry, session)));
  }

  private async publishWrites(
    entry: IndexPublication,
    session?: ClientSession,
  ): Promise<{ entry: IndexEntry; previous: IndexEntry | null }> {
    const updatedAt = new Date().toISOString();
    const fields = {
      name: entry.name,
      description: entry.description,
      fields: entry.fields,
      views: entry.views,
      recordCount: entry.recordCount,
      snapshot: entry.snapshot,
      updatedAt,
      ...(entry.sha256 ? { sha256: entry.sha256 } : {}),
      ...(entry.rollups?.length ? { rollups: entry.rollups } : {}),
      ...(entry.owner ? { owner: entry.owner } : {}),
      ...(entry.origin ? { origin: entry.origin } : {}),
    };
    // One atomic update: $inc hands concurrent publishers distinct versions, and the new entry is the
    // one this update wrote (from the document before it), not a second read a concurrent publish could change.
    // A publish without rollups (an owner) clears the previous version's.
    const unset: Partial<Record<'rollups' | 'owner' | 'origin' | 'sha256', ''>> = {
      ...(fields.sha256 ? {} : { sha256: '' }),
      ...(fields.rollups ? {} : { rollups: '' }),
      ...(fields.owner ? {} : { owner: '' }),
      ...(fields.origin ? {} : { origin: '' }),
    };
    const before = await this.indexes.findOneAndUpdate(
      { _id: entry.name },
      {
        $set: { ...fields, droppedAt: null },
        ...(Object.keys(unset).length ? { $unset: unset } : {}),
        $inc: { version: 1 },
      },
      { upsert: true, returnDocument: 'before', session },
    );
    // Without a transaction, a publish that crashed after its first write left its version without a
    // document: the version it replaces gets one now, from the live entry that still describes it.
    if (before && !before.droppedAt) await this.keepVersion(toIndex(before), session);
    const published: IndexEntry = { ...fields, version: (before?.version ?? 0) + 1 };
    await this.keepVersion(published, session);
    const previous = before && !before.droppedAt ? toIndex(before) : null;
    return { entry: published, previous };
  }

  /** The version's document, written once: an existing one is never replaced. */
  private async keepVersion(entry: IndexEntry, session?: ClientSession): Promise<void> {
    // The owner is the live entry's alone (as in the embedded store).
    const { name, version, owner: _owner, ...rest } = entry;
    await this.versions.updateOne(
      { _id: `${name}@${version}` },
      { $setOnInsert: { ...rest, name, version } },
      { upsert: true, session },
    );
  }

  async getIndex(name: string): Promise<IndexEntry | null> {
    const doc = await this.indexes.findOne({ _id: name, ...LIVE });
    return doc ? toIndex(doc) : null;
  }

  async listIndexes(): Promise<IndexEntry[]> {
    return (await this.indexes.find(LIVE).sort({ _id: 1 }).toArray()).map(toIndex);
  }

  async ownedIndexes(userId: string): Promise<string[]> {
    const docs = await this.indexes
      .find({ owner: userId, ...LIVE }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .toArray();
    return docs.map((d) => d._id);
  }

  async dropIndex(name: string): Promise<IndexEntry> {
    const doc = await this.indexes.findOneAndUpdate(
      { _id: name, ...LIVE },
      { $set: { droppedAt: new Date().toISOString() } },
      { returnDocument: 'before' },
    );
    if (!doc) throw AppError.notFound(`Index "${name}" not found`);
    await this.versions.deleteMany({ name });
    return toIndex(doc);
  }

  async getIndexVersion(name: string, version: number): Promise<IndexEntry | null> {
    const live = await this.indexes.findOne({ _id: name, ...LIVE });
    if (!live) return null;
    const doc = await this.versions.findOne({ _id: `${name}@${version}` });
    // The live version is described by its index document too (a publish that crashed before its second write).
    return doc ? versionEntry(doc) : live.version === version ? toIndex(live) : null;
  }

  async listIndexVersions(name: string): Promise<IndexEntry[]> {
    const live = await this.indexes.findOne({ _id: name, ...LIVE });
    if (!live) return [];
    const kept = (await this.versions.find({ name }).sort({ version: 1 }).toArray()).map(versionEntry);
    return kept.some((v) => v.version === live.version) ? kept : [...kept, toIndex(live)];
  }

  async releaseIndexVersions(name: string, versions: readonly number[]): Promise<void> {
    await this.versions.deleteMany({ _id: { $in: versions.map((v) => `${name}@${v}`) } });
  }

  async acquireLoadLock(name: string, holder: LoadLockHolder, leaseMs: number): Promise<LoadLock> {
    const now = Date.now();
    const held = await this.locks.findOne({ _id: name });
    if (held && held.holder !== holder.id && holderIsLive(held, held.expiresAt.getTime(), now)) {
      throw AppError.busy(lockHeldMessage(name, held, held.acquiredAt), LOCK_RETRY_S);
    }
    const mine = {
      holder: holder.id,
      host: holder.host,
      pid: holder.pid,
      acquiredAt: new Date(now).toISOString(),
      expiresAt: new Date(now + leaseMs),
    };
    try {
      // Takes over only the lock seen above (same holder id), so two takers cannot both win.
      if (held) {
        const res = await this.locks.updateOne({ _id: name, holder: held.holder }, { $set: mine });
        if (res.modifiedCount === 0) throw AppError.busy(lockHeldMessage(name, held, held.acquiredAt), LOCK_RETRY_S);
      } else {
        await this.locks.insertOne({ _id: name, ...mine });
      }
    } catch (err) {
      if (isDuplicateKey(err))
        throw AppError.conflict(
          `Index "${name}" is being loaded or dropped by another process; try again when it has finished`,
        );
      throw err;
    }
    return {
      renew: async () => {
        const res = await this.locks.updateOne(
          { _id: name, holder: holder.id },
          { $set: { expiresAt: new Date(Date.now() + leaseMs) } },
        );
        if (res.matchedCount === 0)
          throw AppError.conflict(
            `The load lock of index "${name}" was lost (its lease ran out and another process took it over)`,
          );
      },
      release: async () => {
        await this.locks.deleteOne({ _id: name, holder: holder.id });
      },
    };
  }
}

import { randomUUID } from 'node:crypto';
import { MongoClient, MongoServerError, type AnyBulkWriteOperation, type Collection, type Filter } from 'mongodb';
import { AppError, quoteInput } from '@quarry/errors';
import { searchWords } from '../domain/search-words';
import type {
  NewReport,
  ReportChange,
  ReportQuery,
  ReportRecord,
  ReportStore,
  ReportVersion,
  ReportViewer,
  TrashedReport,
} from '../ports/report-store.port';

/**
 * `searchText` is the former search field (one string), dropped from documents as they are upgraded.
 * `versions` holds every version's params; `deletedAt` marks a report in the trash.
 */
type ReportDoc = Omit<ReportRecord, 'guid'> & {
  _id: string;
  nameKey: string;
  searchWords: string[];
  searchText?: string;
  versions: ReportVersion[];
  deletedAt?: string | null;
};

function toRecord({
  _id,
  nameKey: _n,
  searchWords: _w,
  searchText: _s,
  versions: _v,
  deletedAt: _d,
  ...rest
}: ReportDoc): ReportRecord {
  return { guid: _id, ...rest };
}

/** Matches live reports only (a document without the field is live too). */
const LIVE = { deletedAt: null };

/** A trashed report's name key: unique per report, so the owner may give its name to a new one. */
const trashedKey = (nameKey: string, guid: string) => `${nameKey}\u0000${guid}`;

function isDuplicate(err: unknown): err is MongoServerError {
  return err instanceof MongoServerError && err.code === 11000;
}

const escapeRegex = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * One query word: a prefix of a word of the name or description. It was an
 * unanchored $regex on one string of all the words, which no index can serve: a collection scan per
 * search. Now the words are an array with a multikey index, and an anchored, case-sensitive regex is a
 * prefix expression that MongoDB turns into index bounds ["word", "wore") ("$regex: Index Use",
 * MongoDB manual); the words are lower-cased on both sides, so case-sensitive is exact.
 */
export function wordFilter(word: string): Filter<ReportDoc> {
  return { searchWords: { $regex: `^${escapeRegex(word)}` } };
}

/** The viewer's reports and the shared ones on its readable indexes, in the query so pages stay full. */
function visibleTo(viewer: ReportViewer): Filter<ReportDoc> {
  const shared: Filter<ReportDoc> = viewer.readableIndexes.includes('*')
    ? { shared: true }
    : { shared: true, index: { $in: [...viewer.readableIndexes] } };
  return { $or: [{ ownerId: viewer.viewerId }, shared] };
}

/** Makes a report saved before versions its own version 1 (idempotent; run at every connect). */
async function upgradeVersions(reports: Collection<ReportDoc>): Promise<void> {
  await reports.updateMany({ version: { $exists: false } }, [
    {
      $set: {
        version: 1,
        indexVersion: 0,
        versions: [{ version: 1, params: '$params', indexVersion: 0, savedAt: '$updatedAt' }],
      },
    },
  ]);
}

/** Gives reports saved before the searchWords field theirs (idempotent; run at every connect). */
async function upgradeSearchFields(reports: Collection<ReportDoc>): Promise<void> {
  const stale = reports.find({ searchWords: { $exists: false } }, { projection: { name: 1, description: 1 } });
  let batch: Array<AnyBulkWriteOperation<ReportDoc>> = [];
  for await (const doc of stale) {
    batch.push({
      updateOne: {
        filter: { _id: doc._id },
        update: { $set: { searchWords: searchWords(doc.name, doc.description) }, $unset: { searchText: '' } },
      },
    });
    if (batch.length === 500) {
      await reports.bulkWrite(batch, { ordered: false });
      batch = [];
    }
  }
  if (batch.length > 0) await reports.bulkWrite(batch, { ordered: false });
}

/** Reports on MongoDB: majority write concern, a unique (owner, name) index, a counter for seq. */
export class MongoReportStore implements ReportStore {
  private constructor(
    private readonly client: MongoClient,
    private readonly reports: Collection<ReportDoc>,
    private readonly counters: Collection<{ _id: string; value: number }>,
  ) {}

  static async connect(url: string, dbName: string): Promise<MongoReportStore> {
    const client = new MongoClient(url, {
      serverSelectionTimeoutMS: 5000,
      writeConcern: { w: 'majority', journal: true },
    });
    await client.connect();
    const db = client.db(dbName);
    const reports = db.collection<ReportDoc>('reports');
    await reports.createIndex({ ownerId: 1, nameKey: 1 }, { unique: true });
    await reports.createIndex({ seq: -1 });
    await reports.createIndex({ ownerId: 1, seq: -1 });
    await reports.createIndex({ shared: 1, index: 1, seq: -1 });
    await reports.createIndex({ searchWords: 1 });
    await upgradeSearchFields(reports);
    await upgradeVersions(reports);
    return new MongoReportStore(client, reports, db.collection('counters'));
  }

  private async nextSeq(): Promise<number> {
    const doc = await this.counters.findOneAndUpdate(
      { _id: 'reports' },
      { $inc: { value: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    return doc?.value ?? 1;
  }

  async insert(report: NewReport): Promise<ReportRecord> {
    const now = new Date().toISOString();
    const { guid, indexVersion = 0, ...fields } = report;
    const updatedAt = report.updatedAt ?? now;
    const doc: ReportDoc = {
      ...fields,
      _id: guid ?? randomUUID(),
      seq: await this.nextSeq(),
      nameKey: report.name.toLowerCase(),
      searchWords: searchWords(report.name, report.description),
      version: 1,
      indexVersion,
      versions: [{ version: 1, params: report.params, indexVersion, savedAt: updatedAt }],
      createdAt: report.createdAt ?? now,
      updatedAt,
    };
    try {
      await this.reports.insertOne(doc);
    } catch (err) {
      if (isDuplicate(err)) {
        if (JSON.stringify(err.keyPattern ?? {}).includes('_id'))
          throw AppError.conflict(`A report with guid ${doc._id} already exists`);
        throw AppError.conflict(`You already have a report named ${quoteInput(report.name)}`);
      }
      throw err;
    }
    return toRecord(doc);
  }

  async get(guid: string): Promise<ReportRecord | null> {
    const doc = await this.reports.findOne({ _id: guid, ...LIVE });
    return doc ? toRecord(doc) : null;
  }

  async getVisible(guid: string, viewer: ReportViewer): Promise<ReportRecord | null> {
    const doc = await this.reports.findOne({ $and: [{ _id: guid }, LIVE, visibleTo(viewer)] });
    return doc ? toRecord(doc) : null;
  }

  async versions(guid: string): Promise<ReportVersion[]> {
    const doc = await this.reports.findOne({ _id: guid, ...LIVE }, { projection: { versions: 1 } });
    return doc ? [...doc.versions].sort((a, b) => a.version - b.version) : [];
  }

  async update(guid: string, change: ReportChange): Promise<ReportRecord> {
    // Optimistic: the update applies only to the version it read, so of two racing updates one retries
    // on top of the other and both versions are kept.
    for (;;) {
      const doc = await this.reports.findOne({ _id: guid, ...LIVE });
      if (!doc) throw AppError.notFound(`Report ${guid} not found`);
      const now = new Date().toISOString();
      const name = change.name ?? doc.name;
      const description = change.description ?? doc.description;
      const set: Partial<ReportDoc> = {
        name,
        nameKey: name.toLowerCase(),
        description,
        searchWords: searchWords(name, description),
        updatedAt: now,
        ...(change.folder !== undefined ? { folder: change.folder } : {}),
        ...(change.shared !== undefined ? { shared: change.shared } : {}),
      };
      const version = change.params ? doc.version + 1 : doc.version;
      if (change.params)
        Object.assign(set, {
          version,
          params: change.params.params,
          indexVersion: change.params.indexVersion,
        });
      try {
        const res = await this.reports.updateOne(
          { _id: guid, version: doc.version, ...LIVE },
          change.params
            ? {
                $set: set,
                $push: {
                  versions: {
                    version,
                    params: change.params.params,
                    indexVersion: change.params.indexVersion,
                    savedAt: now,
                  },
                },
              }
            : { $set: set },
        );
        if (res.matchedCount === 1) return toRecord({ ...doc, ...set });
      } catch (err) {
        if (isDuplicate(err)) throw AppError.conflict(`You already have a report named ${quoteInput(name)}`);
        throw err;
      }
    }
  }

  async trash(guid: string, deletedAt: string): Promise<void> {
    const doc = await this.reports.findOne({ _id: guid, ...LIVE }, { projection: { nameKey: 1 } });
    const res = doc
      ? await this.reports.updateOne(
          { _id: guid, ...LIVE },
          { $set: { deletedAt, nameKey: trashedKey(doc.nameKey, guid) } },
        )
      : undefined;
    if (!res || res.matchedCount === 0) throw AppError.notFound(`Report ${guid} not found`);
  }

  async getTrashed(guid: string): Promise<TrashedReport | null> {
    const doc = await this.reports.findOne({ _id: guid, deletedAt: { $type: 'string' } });
    return doc?.deletedAt ? { report: toRecord(doc), deletedAt: doc.deletedAt } : null;
  }

  async listTrash(ownerName?: string): Promise<TrashedReport[]> {
    const docs = await this.reports
      .find({ deletedAt: { $type: 'string' }, ...(ownerName !== undefined ? { ownerName } : {}) })
      .sort({ deletedAt: -1, seq: -1 })
      .toArray();
    return docs.map((doc) => ({ report: toRecord(doc), deletedAt: doc.deletedAt as string }));
  }

  async restore(guid: string): Promise<ReportRecord> {
    const doc = await this.reports.findOne({ _id: guid, deletedAt: { $type: 'string' } });
    if (!doc) throw AppError.notFound(`Report ${guid} is not in the trash`);
    try {
      await this.reports.updateOne(
        { _id: guid, deletedAt: { $type: 'string' } },
        { $set: { deletedAt: null, nameKey: doc.name.toLowerCase() } },
      );
    } catch (err) {
      if (isDuplicate(err)) throw AppError.conflict(`You already have a report named ${quoteInput(doc.name)}`);
      throw err;
    }
    return toRecord(doc);
  }

  async purgeTrash(deletedBefore: string): Promise<number> {
    const res = await this.reports.deleteMany({ deletedAt: { $type: 'string', $lt: deletedBefore } });
    return res.deletedCount;
  }

  async referencedIndexVersions(index: string): Promise<number[]> {
    const found = await this.reports.distinct('versions.indexVersion', { index });
    return (found as number[]).filter((v) => v > 0).sort((a, b) => a - b);
  }

  async find(q: ReportQuery): Promise<ReportRecord[]> {
    const and: Array<Filter<ReportDoc>> = [LIVE];
    if (q.viewerId !== undefined)
      and.push(visibleTo({ viewerId: q.viewerId, readableIndexes: q.readableIndexes ?? [] }));
    if (q.ownerName !== undefined) and.push({ ownerName: q.ownerName });
    for (const w of q.words) and.push(wordFilter(w));
    if (q.types.length) and.push({ type: { $in: q.types } });
    if (q.beforeSeq !== undefined) and.push({ seq: { $lt: q.beforeSeq } });
    const docs = await this.reports.find({ $and: and }).sort({ seq: -1 }).limit(q.limit).toArray();
    return docs.map(toRecord);
  }

  async delete(guid: string): Promise<void> {
    const res = await this.reports.deleteOne({ _id: guid });
    if (res.deletedCount === 0) throw AppError.notFound(`Report ${guid} not found`);
  }

  async ping(): Promise<void> {
    await this.client.db('admin').command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

import { randomUUID } from 'node:crypto';
import { MongoClient, MongoServerError, type Collection, type Filter } from 'mongodb';
import { AppError, quoteInput } from '@quarry/errors';
import { searchText } from '../domain/search-words';
import type { NewReport, ReportQuery, ReportRecord, ReportStore, ReportViewer } from '../ports/report-store.port';

type ReportDoc = Omit<ReportRecord, 'guid'> & { _id: string; nameKey: string; searchText: string };

function toRecord({ _id, nameKey: _n, searchText: _s, ...rest }: ReportDoc): ReportRecord {
  return { guid: _id, ...rest };
}

const escapeRegex = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The viewer's reports and the shared ones on its readable indexes, in the query so pages stay full. */
function visibleTo(viewer: ReportViewer): Filter<ReportDoc> {
  const shared: Filter<ReportDoc> = viewer.readableIndexes.includes('*')
    ? { shared: true }
    : { shared: true, index: { $in: [...viewer.readableIndexes] } };
  return { $or: [{ ownerId: viewer.viewerId }, shared] };
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
    const { guid, ...fields } = report;
    const doc: ReportDoc = {
      ...fields,
      _id: guid ?? randomUUID(),
      seq: await this.nextSeq(),
      nameKey: report.name.toLowerCase(),
      searchText: searchText(report.name, report.description),
      createdAt: report.createdAt ?? now,
      updatedAt: report.updatedAt ?? now,
    };
    try {
      await this.reports.insertOne(doc);
    } catch (err) {
      if (err instanceof MongoServerError && err.code === 11000) {
        if (JSON.stringify(err.keyPattern ?? {}).includes('_id'))
          throw AppError.conflict(`A report with guid ${doc._id} already exists`);
        throw AppError.conflict(`You already have a report named ${quoteInput(report.name)}`);
      }
      throw err;
    }
    return toRecord(doc);
  }

  async get(guid: string): Promise<ReportRecord | null> {
    const doc = await this.reports.findOne({ _id: guid });
    return doc ? toRecord(doc) : null;
  }

  async getVisible(guid: string, viewer: ReportViewer): Promise<ReportRecord | null> {
    const doc = await this.reports.findOne({ $and: [{ _id: guid }, visibleTo(viewer)] });
    return doc ? toRecord(doc) : null;
  }

  async find(q: ReportQuery): Promise<ReportRecord[]> {
    const and: Array<Filter<ReportDoc>> = [];
    if (q.viewerId !== undefined)
      and.push(visibleTo({ viewerId: q.viewerId, readableIndexes: q.readableIndexes ?? [] }));
    if (q.ownerName !== undefined) and.push({ ownerName: q.ownerName });
    for (const w of q.words) and.push({ searchText: { $regex: ` ${escapeRegex(w)}` } });
    if (q.types.length) and.push({ type: { $in: q.types } });
    if (q.beforeSeq !== undefined) and.push({ seq: { $lt: q.beforeSeq } });
    const docs = await this.reports
      .find(and.length ? { $and: and } : {})
      .sort({ seq: -1 })
      .limit(q.limit)
      .toArray();
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

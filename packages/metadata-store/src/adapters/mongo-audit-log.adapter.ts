import type { Collection } from 'mongodb';
import type { AuditEntry, AuditLog, AuditQuery } from '../ports/audit-log.port';
import type { AuditDoc } from './mongo-collections';

function toAudit({ seq: _seq, ...rest }: AuditDoc & { _id?: unknown }): AuditEntry {
  const { _id: _ignored, ...entry } = rest as AuditEntry & { _id?: unknown };
  return entry;
}

/** The audit trail (the AuditLog port) on MongoDB. */
export class MongoAuditLog implements AuditLog {
  private seq = 0;

  constructor(private readonly audit: Collection<AuditDoc>) {}

  async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // Date.now() and a counter: increasing within this process, and ordered by time across processes.
    const base = Date.now() * 1000;
    const docs = entries.map((e) => ({ ...e, seq: base + (this.seq++ % 1000) }));
    await this.audit.insertMany(docs, { ordered: true });
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const filter: Record<string, unknown> = {};
    if (query.userName !== undefined) filter.userName = query.userName;
    if (query.since !== undefined) filter.time = { $gte: query.since };
    if (query.method !== undefined) filter.method = query.method;
    const docs = await this.audit.find(filter).sort({ time: -1, seq: -1 }).limit(query.limit).toArray();
    return docs.map(toAudit);
  }

  async purgeAudit(before: string): Promise<number> {
    return (await this.audit.deleteMany({ time: { $lt: before } })).deletedCount;
  }
}

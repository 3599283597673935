import { EXPORT_ID_PATTERN, type ExportsStatusResult } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportJobs } from '../ports/export-jobs.port';
import type { ExportRecord, ExportStore } from '../ports/export-store.port';

/** A record younger than this whose job is not found yet is being started, not lost. */
const STARTING_MS = 60_000;
/**
 * How often EXPORTS.STATUS asks the queue about one export still queued or running. A client that polls
 * closely would otherwise cost a Redis round trip a call, on the machine the export runs on; a lost job is
 * seen this much later at most.
 */
const QUEUE_CHECK_MS = 1000;
/** Exports whose last queue check is remembered; past it the memory starts again (a check too many). */
const QUEUE_CHECKS_KEPT = 10_000;

/** What a download finds: the file, or why not (the transport maps `gone` to 410, `missing` to 404). */
export type ExportFile =
  | { kind: 'file'; record: ExportRecord; open: () => NodeJS.ReadableStream; fileName: string }
  | { kind: 'missing' }
  | { kind: 'gone' }
  | { kind: 'not-ready'; state: string };

/**
 * EXPORTS.STATUS, the download, and the sweeps: only the creator ever learns an export exists; another
 * user's id reads exactly as an unknown one.
 */
export class ExportStatusUseCase {
  private readonly queueChecked = new Map<string, number>();

  constructor(
    private readonly store: ExportStore,
    private readonly jobs: ExportJobs,
    private readonly now: () => number = Date.now,
  ) {}

  private async own(userId: string, id: string): Promise<ExportRecord | undefined> {
    if (typeof id !== 'string' || !EXPORT_ID_PATTERN.test(id)) return undefined;
    const record = await this.store.get(id);
    return record && record.userId === userId ? record : undefined;
  }

  private expired(record: ExportRecord): boolean {
    return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= this.now();
  }

  async status(userId: string, id: string): Promise<ExportsStatusResult> {
    const owned = await this.own(userId, id);
    if (!owned || this.expired(owned)) throw AppError.notFound('No such export');
    const record = await this.reconcile(owned, true);
    return {
      state: record.state,
      rowsWritten: record.rowsWritten,
      bytes: record.bytes,
      ...(record.error !== undefined ? { error: record.error } : {}),
      ...(record.expiresAt !== undefined ? { expiresAt: record.expiresAt } : {}),
    };
  }

  async file(userId: string, id: string): Promise<ExportFile> {
    const owned = await this.own(userId, id);
    if (!owned) return { kind: 'missing' };
    const record = await this.reconcile(owned);
    if (this.expired(record)) return { kind: 'gone' };
    if (record.state !== 'done') return { kind: 'not-ready', state: record.state };
    return {
      kind: 'file',
      record,
      open: () => this.store.openFile(record.id, record.format),
      fileName: `export-${record.id}.${record.format}`,
    };
  }

  /**
   * A record still queued or running whose job the queue has failed (its run died twice) or lost (Redis
   * was emptied) is failed, its partial file removed: the record never says running for ever.
   */
  private async reconcile(record: ExportRecord, polled = false): Promise<ExportRecord> {
    if (record.state !== 'queued' && record.state !== 'running') {
      this.queueChecked.delete(record.id);
      return record;
    }
    if (polled) {
      const last = this.queueChecked.get(record.id);
      if (last !== undefined && this.now() - last < QUEUE_CHECK_MS) return record;
      if (this.queueChecked.size >= QUEUE_CHECKS_KEPT) this.queueChecked.clear();
      this.queueChecked.set(record.id, this.now());
    }
    const job = await this.jobs.status(record.id);
    if (job.state !== 'failed' && job.state !== 'missing') return record;
    if (job.state === 'missing' && Date.parse(record.createdAt) + STARTING_MS > this.now()) return record;
    // Read again: the run may have settled the record meanwhile, with its own words.
    const latest = (await this.store.get(record.id)) ?? record;
    if (latest.state !== 'queued' && latest.state !== 'running') return latest;
    await this.store.remove(record.id, record.format, false);
    return this.store.update(record.id, { state: 'failed', error: `The export failed: ${job.error}` });
  }

  /**
   * Deletes expired files (their records stay a while, so a download says 410 rather than 404), and
   * settles the exports whose jobs are gone.
   */
  async sweep(keepRecordsMs: number): Promise<void> {
    for (const record of await this.store.list()) {
      if (this.expired(record)) {
        await this.store.remove(record.id, record.format, Date.parse(record.expiresAt!) + keepRecordsMs <= this.now());
      } else {
        await this.reconcile(record);
      }
    }
  }
}

import { EXPORT_ID_PATTERN, type ExportsStatusResult } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportRecord, ExportStore } from '../ports/export-store.port';

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
  constructor(
    private readonly store: ExportStore,
    private readonly owner: string,
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
    const record = await this.own(userId, id);
    if (!record || this.expired(record)) throw AppError.notFound('No such export');
    const bytes = record.state === 'done' ? record.bytes : await this.store.fileSize(record.id, record.format);
    return {
      state: record.state,
      rowsWritten: record.rowsWritten,
      bytes,
      ...(record.error !== undefined ? { error: record.error } : {}),
      ...(record.expiresAt !== undefined ? { expiresAt: record.expiresAt } : {}),
    };
  }

  async file(userId: string, id: string): Promise<ExportFile> {
    const record = await this.own(userId, id);
    if (!record) return { kind: 'missing' };
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
   * Deletes expired files (their records stay a while, so a download says 410 rather than 404), and
   * fails the exports this process left unfinished when it stopped: their partial files go.
   */
  async sweep(restarted: boolean, keepRecordsMs: number): Promise<void> {
    for (const record of await this.store.list()) {
      if (restarted && record.owner === this.owner && (record.state === 'queued' || record.state === 'running')) {
        await this.store.remove(record.id, record.format, false);
        await this.store.update(record.id, {
          state: 'failed',
          error: 'The export failed: the server stopped before it finished; start it again',
        });
      } else if (this.expired(record)) {
        await this.store.remove(record.id, record.format, Date.parse(record.expiresAt!) + keepRecordsMs <= this.now());
      }
    }
  }
}

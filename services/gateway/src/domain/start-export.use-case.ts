import { randomBytes } from 'node:crypto';
import type { ExportFormat, ExportMethod } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportStore } from '../ports/export-store.port';
import type { SearchExportRequest, SearchExports } from '../ports/search-exports.port';
import type { Caller, RequestTrace } from '../ports/service-clients.port';
import { readParams } from './method-params';

export interface ExportLimits {
  /** QUARRY_EXPORT_MAX_ROWS */
  maxRows: number;
  /** QUARRY_EXPORT_TTL_S, in ms */
  ttlMs: number;
  /** Exports of one user that run at once; more wait queued. */
  perUser: number;
}

interface Job {
  id: string;
  caller: Caller;
  req: SearchExportRequest;
  format: 'csv' | 'jsonl' | 'parquet';
  trace: RequestTrace;
}

/**
 * EXPORTS.START: checks the method's params and the count before any work, records the export as
 * queued, and runs it in the background, at most `perUser` of a user's at a time.
 */
export class StartExportUseCase {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Job[]>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly store: ExportStore,
    private readonly searches: SearchExports,
    private readonly limits: ExportLimits,
    private readonly owner: string,
    private readonly now: () => number = Date.now,
  ) {}

  async start(
    caller: Caller,
    input: { method: ExportMethod; params: Record<string, unknown>; format: ExportFormat },
    trace: RequestTrace,
  ): Promise<{ exportId: string }> {
    if (input.method !== 'QUERIES.EXECUTE')
      throw AppError.invalid(`method: exports of ${input.method} are not available on this server yet`);
    if (input.format === 'xlsx')
      throw AppError.invalid('format: "xlsx" exports are not available on this server yet; use csv, jsonl or parquet');
    const { complete } = readParams('QUERIES.EXECUTE', input.params, 'params');
    const req: SearchExportRequest = {
      index: complete.index,
      query: complete.query,
      sort: complete.sort.map((s) => ({ field: s.field, direction: s.direction })),
    };
    const count = await this.searches.count(caller, req, trace);
    if (count > this.limits.maxRows)
      throw AppError.invalid(
        `The export would hold ${count} records, more than QUARRY_EXPORT_MAX_ROWS (${this.limits.maxRows}); narrow the query`,
      );
    const id = randomBytes(16).toString('hex');
    await this.store.create({
      id,
      userId: caller.userId,
      method: input.method,
      format: input.format,
      state: 'queued',
      rowsWritten: 0,
      bytes: 0,
      createdAt: new Date(this.now()).toISOString(),
      owner: this.owner,
    });
    this.enqueue({ id, caller, req, format: input.format, trace });
    return { exportId: id };
  }

  /** Resolves once every export this process started has finished (a stop, the tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private enqueue(job: Job): void {
    const user = job.caller.userId;
    if ((this.running.get(user) ?? 0) >= this.limits.perUser) {
      this.waiting.set(user, [...(this.waiting.get(user) ?? []), job]);
      return;
    }
    this.running.set(user, (this.running.get(user) ?? 0) + 1);
    const done = this.run(job).finally(() => {
      this.inFlight.delete(done);
      this.running.set(user, (this.running.get(user) ?? 1) - 1);
      const next = this.waiting.get(user)?.shift();
      if (next) this.enqueue(next);
    });
    this.inFlight.add(done);
  }

  private async run(job: Job): Promise<void> {
    const { id, format } = job;
    try {
      await this.store.update(id, { state: 'running' });
      const rows = await this.searches.write(job.caller, job.req, format, this.store.filePath(id, format), job.trace);
      await this.store.seal(id, format);
      const bytes = await this.store.fileSize(id, format);
      await this.store.update(id, {
        state: 'done',
        rowsWritten: rows,
        bytes,
        expiresAt: new Date(this.now() + this.limits.ttlMs).toISOString(),
      });
    } catch (err) {
      // A partial file is never served: it goes, and the record says why.
      await this.store.remove(id, format, false).catch(() => undefined);
      const detail = err instanceof AppError ? err.detail : err instanceof Error ? err.message : String(err);
      await this.store.update(id, { state: 'failed', error: `The export failed: ${detail}` }).catch(() => undefined);
    }
  }
}

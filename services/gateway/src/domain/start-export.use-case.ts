import { randomBytes } from 'node:crypto';
import type { CrosstabJsonTable, ExportFormat, ExportMethod } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportStore } from '../ports/export-store.port';
import { RawJson } from '../ports/raw-json';
import type { SearchExportRequest, SearchExports } from '../ports/search-exports.port';
import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import { readParams } from './method-params';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';

export interface ExportLimits {
  /** QUARRY_EXPORT_MAX_ROWS */
  maxRows: number;
  /** QUARRY_EXPORT_TTL_S, in ms */
  ttlMs: number;
  /** Exports of one user that run at once; more wait queued. */
  perUser: number;
}

/** What an export's job does once its turn comes: writes the export's file, resolves with the rows written. */
type Produce = (id: string, format: ExportFormat) => Promise<number>;

interface Job {
  id: string;
  userId: string;
  format: ExportFormat;
  produce: Produce;
}

/** The crosstab's own outputs: its CSV and XLSX tables, and its JSON table's rows as JSON Lines. */
const CROSSTAB_FORMAT = { csv: 'csv', xlsx: 'xlsx', jsonl: 'json' } as const;
const CHART_KEYS = ['chartType', 'chartTotals', 'imageFormat', 'width', 'height'] as const;

/**
 * EXPORTS.START: checks the method's params (and a search's count) before any work, records the export as
 * queued, and runs it in the background, at most `perUser` of a user's at a time. A search is written by
 * the query service's engine straight to the file; a crosstab, bounded by its own limits, is the table
 * the crosstab renders, written as it answered.
 */
export class StartExportUseCase {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Job[]>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly store: ExportStore,
    private readonly searches: SearchExports,
    private readonly services: ServiceClients,
    private readonly crosstab: RunCrosstabUseCase,
    private readonly limits: ExportLimits,
    private readonly owner: string,
    private readonly now: () => number = Date.now,
  ) {}

  async start(
    caller: Caller,
    input: { method: ExportMethod; params: Record<string, unknown>; format: ExportFormat },
    trace: RequestTrace,
  ): Promise<{ exportId: string }> {
    const produce = await this.plan(caller, input, trace);
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
    this.enqueue({ id, userId: caller.userId, format: input.format, produce });
    return { exportId: id };
  }

  /** Resolves once every export this process started has finished (a stop, the tests). */
  async drain(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Everything a caller can get wrong is refused here, before the export is recorded. */
  private async plan(
    caller: Caller,
    input: { method: ExportMethod; params: Record<string, unknown>; format: ExportFormat },
    trace: RequestTrace,
  ): Promise<Produce> {
    if (input.params.saveReport !== undefined)
      throw AppError.invalid('params.saveReport: an export saves no report; save it with the method itself');
    if (input.method === 'QUERIES.EXECUTE') {
      const { complete } = readParams('QUERIES.EXECUTE', input.params, 'params');
      return this.planSearch(caller, { search: complete }, input.format, trace);
    }
    if (input.method === 'CROSSTAB.EXECUTE')
      return this.planCrosstab(caller, input.params, 'params', input.format, trace);
    const { complete } = readParams('REPORTS.EXECUTE', input.params, 'params');
    const metadata = await this.services.reportMetadata(
      caller,
      { guid: complete.guid, ...(complete.version !== undefined ? { version: complete.version } : {}) },
      trace,
    );
    let asOfVersion: number | undefined;
    if (complete.asOf === 'saved') {
      if (metadata.indexVersion <= 0)
        throw AppError.notFound(
          `Version ${metadata.version} of report ${metadata.guid} was saved before Quarry recorded index versions: it can only run with asOf "latest"`,
        );
      asOfVersion = metadata.indexVersion;
    }
    const saved = { ...metadata.params };
    if (metadata.method === 'QUERIES.EXECUTE') {
      const { complete: q } = readParams('QUERIES.EXECUTE', saved);
      return this.planSearch(caller, { search: q, asOfVersion }, input.format, trace);
    }
    // A chart report exports its table.
    for (const k of CHART_KEYS) delete saved[k];
    return this.planCrosstab(caller, saved, undefined, input.format, trace, asOfVersion);
  }

  private async planSearch(
    caller: Caller,
    req: SearchExportRequest,
    format: ExportFormat,
    trace: RequestTrace,
  ): Promise<Produce> {
    if (format === 'xlsx')
      throw AppError.invalid('format: a search is exported as csv, jsonl or parquet; xlsx is not available yet');
    const count = await this.searches.count(caller, req, trace);
    if (count > this.limits.maxRows)
      throw AppError.invalid(
        `The export would hold ${count} records, more than QUARRY_EXPORT_MAX_ROWS (${this.limits.maxRows}); narrow the query`,
      );
    return (id) => this.searches.write(caller, req, format, this.store.filePath(id, format), trace);
  }

  private planCrosstab(
    caller: Caller,
    params: Record<string, unknown>,
    at: string | undefined,
    format: ExportFormat,
    trace: RequestTrace,
    asOfVersion?: number,
  ): Produce {
    if (format === 'parquet')
      throw AppError.invalid('format: a crosstab is exported as csv, xlsx or jsonl (its cells)');
    if (params.format !== undefined || params.chartType !== undefined)
      throw AppError.invalid(
        `${at ? `${at}.` : ''}format: the export's format says how the table is written; give neither format nor chartType`,
      );
    const read = readParams('CROSSTAB.EXECUTE', { ...params, format: CROSSTAB_FORMAT[format] }, at);
    return async (id) => {
      const ran = await this.crosstab.run(caller, read, trace, asOfVersion);
      const data = ran.data as { data: unknown; rowCount: number };
      if (format === 'jsonl') {
        // The crosstab service's JSON text, carried through the gateway unparsed.
        const raw = data.data;
        const table = JSON.parse(raw instanceof RawJson ? raw.text : JSON.stringify(raw)) as CrosstabJsonTable;
        const lines = function* () {
          for (const row of table.rows) yield `${JSON.stringify(row)}\n`;
          yield `${JSON.stringify({ key: null, columnTotals: table.columnTotals, grandTotal: table.grandTotal })}\n`;
        };
        await this.store.writeFile(id, format, lines());
        return table.rows.length;
      }
      const body = String(data.data);
      await this.store.writeFile(id, format, [format === 'xlsx' ? Buffer.from(body, 'base64') : body]);
      return data.rowCount;
    };
  }

  private enqueue(job: Job): void {
    const user = job.userId;
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
      const rows = await job.produce(id, format);
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

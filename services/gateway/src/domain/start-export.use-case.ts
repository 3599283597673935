import { applyParameters } from './report-parameters';
import { randomBytes } from 'node:crypto';
import type { RecordFileConverter } from '../ports/delivery-files.port';
import { indexFields } from './index-fields';
import type { CrosstabJsonTable, ExportFormat, ExportMethod } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import {
  ExportFailed,
  type ExportJob,
  type ExportJobs,
  type ExportRun,
  type ExportRunOutcome,
} from '../ports/export-jobs.port';
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
  /** Exports of one user that run at once in this process; more wait queued. */
  perUser: number;
  /** QUARRY_EXPORT_MIN_FREE_MB, in bytes: below it a running export fails before the disk is full. */
  minFreeBytes: number;
  /** How often a running export's record says how far it got. */
  progressMs: number;
}

/** What an export's run does: writes the run's partial file, resolves with the rows written. */
type Produce = (id: string, run: string, signal: AbortSignal) => Promise<number>;

type ExportInput = { method: ExportMethod; params: Record<string, unknown>; format: ExportFormat };

/** The crosstab's own outputs: its CSV and XLSX tables, and its JSON table's rows as JSON Lines. */
const CROSSTAB_FORMAT = { csv: 'csv', xlsx: 'xlsx', jsonl: 'json' } as const;
const CHART_KEYS = ['chartType', 'chartTotals', 'imageFormat', 'width', 'height'] as const;

/**
 * EXPORTS.START: checks the method's params (and a search's count) before any work, records the export as
 * queued and adds its job to the deployment's queue. `run` is the job's run, on whichever gateway's worker
 * takes it: at most `perUser` of a user's at a time per process. A search is written by the query service's
 * engine straight to the run's partial file; a crosstab, bounded by its own limits, is the table the
 * crosstab renders, written as it answered. Only a finished file is published where downloads read it.
 */
export class StartExportUseCase {
  private readonly running = new Map<string, number>();

  constructor(
    private readonly store: ExportStore,
    private readonly jobs: ExportJobs,
    private readonly searches: SearchExports,
    private readonly services: ServiceClients,
    private readonly crosstab: RunCrosstabUseCase,
    private readonly limits: ExportLimits,
    private readonly now: () => number = Date.now,
    /** Turns a search's JSON Lines into a workbook; without it a search is not exported as xlsx. */
    private readonly converter?: RecordFileConverter,
  ) {}

  async start(caller: Caller, input: ExportInput, trace: RequestTrace): Promise<{ exportId: string }> {
    await this.plan(caller, input, trace);
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
    });
    try {
      await this.jobs.add({ exportId: id, caller, ...input, requestId: trace.requestId });
    } catch (err) {
      await this.store.remove(id, input.format, true).catch(() => undefined);
      throw err;
    }
    return { exportId: id };
  }

  /** One run of an export's job. Throws ExportFailed for the export's own failure, anything else to hand it back. */
  async run(job: ExportJob, { run, signal }: ExportRun): Promise<ExportRunOutcome> {
    const { exportId: id, format, caller } = job;
    const record = await this.store.get(id);
    // Gone (expired and swept) or already settled: nothing to run.
    if (!record || record.state === 'done' || record.state === 'failed') return 'done';
    const user = caller.userId;
    if ((this.running.get(user) ?? 0) >= this.limits.perUser) return 'wait';
    this.running.set(user, (this.running.get(user) ?? 0) + 1);
    const stop = new AbortController();
    const onStop = () => stop.abort(signal.reason);
    signal.addEventListener('abort', onStop, { once: true });
    let progress: Promise<void> | undefined;
    try {
      // Whatever an earlier run of this export left goes first.
      await this.store.remove(id, format, false);
      await this.store.update(id, { state: 'running', rowsWritten: 0, bytes: 0 });
      const produce = await this.plan(caller, job, { requestId: job.requestId });
      progress = this.follow(id, run, format, stop);
      const rows = await produce(id, run, stop.signal);
      stop.abort();
      await progress;
      const bytes = await this.store.publish(id, run, format);
      await this.store.update(id, {
        state: 'done',
        rowsWritten: rows,
        bytes,
        expiresAt: new Date(this.now() + this.limits.ttlMs).toISOString(),
      });
      return 'done';
    } catch (err) {
      stop.abort();
      await progress;
      // A partial file is never served: it goes.
      await this.store.remove(id, format, false).catch(() => undefined);
      if (signal.aborted) {
        // This process is stopping: the job goes back to the queue and runs again.
        await this.store.update(id, { state: 'queued', rowsWritten: 0, bytes: 0 }).catch(() => undefined);
        throw err;
      }
      const cause = stop.signal.reason instanceof ExportFailed ? stop.signal.reason : err;
      const detail = cause instanceof AppError ? cause.detail : cause instanceof Error ? cause.message : String(cause);
      const error = `The export failed: ${detail}`;
      await this.store.update(id, { state: 'failed', error }).catch(() => undefined);
      throw new ExportFailed(error);
    } finally {
      signal.removeEventListener('abort', onStop);
      this.running.set(user, (this.running.get(user) ?? 1) - 1);
    }
  }

  /**
   * Until `stop` aborts: how far the run's file got, into the record, and the volume's free space, which
   * stops the run (with its reason) before the disk is full.
   */
  private async follow(id: string, run: string, format: ExportFormat, stop: AbortController): Promise<void> {
    const watch = this.store.watch(id, run, format);
    const tick = () =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          stop.signal.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, this.limits.progressMs);
        stop.signal.addEventListener('abort', done, { once: true });
      });
    while (!stop.signal.aborted) {
      await tick();
      if (stop.signal.aborted) return;
      try {
        const free = await this.store.freeBytes();
        if (free < this.limits.minFreeBytes) {
          stop.abort(
            new ExportFailed(
              `the exports volume has ${Math.floor(free / 1_048_576)} MB free, less than QUARRY_EXPORT_MIN_FREE_MB (${Math.floor(this.limits.minFreeBytes / 1_048_576)}); the partial file was removed`,
            ),
          );
          return;
        }
        const sofar = await watch.read();
        if (stop.signal.aborted) return;
        await this.store.update(id, {
          bytes: sofar.bytes,
          ...(sofar.rows !== undefined ? { rowsWritten: sofar.rows } : {}),
        });
      } catch {
        // Progress is a courtesy: the run's own outcome says whether it worked.
      }
    }
  }

  /** Everything a caller can get wrong is refused here, before the export is recorded. */
  private async plan(caller: Caller, input: ExportInput, trace: RequestTrace): Promise<Produce> {
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
    // The report's parameters (given, else defaults) apply as they do to REPORTS.EXECUTE.
    const query = applyParameters(
      typeof saved.query === 'string' ? saved.query : undefined,
      metadata.parameters,
      complete.parameters,
    );
    if (query !== undefined) saved.query = query;
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
    const converter = this.converter;
    if (format === 'xlsx' && !converter)
      throw AppError.invalid('format: a search is exported as csv, jsonl or parquet here; xlsx is not available');
    const count = await this.searches.count(caller, req, trace);
    if (count > this.limits.maxRows)
      throw AppError.invalid(
        `The export would hold ${count} records, more than QUARRY_EXPORT_MAX_ROWS (${this.limits.maxRows}); narrow the query`,
      );
    if (format !== 'xlsx' || !converter)
      return (id, run, signal) =>
        this.searches.write(caller, req, format as 'csv' | 'jsonl' | 'parquet', this.store.partialPath(id, run), {
          ...trace,
          signal,
        });
    // The engine writes JSON Lines beside the partial file; the workbook is streamed from it (a new sheet
    // at Excel's row limit), its header the fields as this caller sees them.
    const fields = (await indexFields(this.services, caller, req.search.index, trace)).map((f) => f.name);
    return async (id, run, signal) => {
      // The JSON Lines are a run's partial file of their own (hex, like every run), which removal sweeps too.
      const stagedRun = `${run}0`;
      try {
        const staged = this.store.partialPath(id, stagedRun);
        const written = await this.searches.write(caller, req, 'jsonl', staged, { ...trace, signal });
        await converter.toXlsx(staged, this.store.partialPath(id, run), fields, req.search.index);
        return written;
      } finally {
        await this.store.discardPartial(id, stagedRun);
      }
    };
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
    return async (id, run) => {
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
        await this.store.writePartial(id, run, lines());
        return table.rows.length;
      }
      const body = String(data.data);
      await this.store.writePartial(id, run, [format === 'xlsx' ? Buffer.from(body, 'base64') : body]);
      return data.rowCount;
    };
  }
}

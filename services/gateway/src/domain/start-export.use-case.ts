import { applyParameters } from './report-parameters';
import { randomBytes } from 'node:crypto';
import type { RecordFileConverter } from '../ports/delivery-files.port';
import { indexFields } from './index-fields';
import type { ExportFormat, ExportMethod } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import {
  ExportFailed,
  type ExportJob,
  type ExportJobs,
  type ExportRun,
  type ExportRunOutcome,
  type SearchCheck,
} from '../ports/export-jobs.port';
import type { ExportStore } from '../ports/export-store.port';
import type { SearchExportRequest, SearchExports } from '../ports/search-exports.port';
import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import { readParams } from './method-params';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';
import { planCrosstabExport, savedCrosstabForExport, type ExportPlan } from './crosstab-export';

export interface ExportLimits {
  /** QUARRY_EXPORT_MAX_ROWS */
  maxRows: number;
  /** QUARRY_EXPORT_TTL_S, in ms */
  ttlMs: number;
  /** Exports of one user that run at once in this process; more wait queued. */
  perUser: number;
  /** QUARRY_EXPORT_MAX_PER_USER: one user's exports queued or running at once; one more is a 429. */
  maxPerUser: number;
  /** QUARRY_EXPORT_MIN_FREE_MB, in bytes: below it a running export fails before the disk is full. */
  minFreeBytes: number;
  /** How often a running export's record says how far it got. */
  progressMs: number;
}

type ExportInput = { method: ExportMethod; params: Record<string, unknown>; format: ExportFormat };

/**
 * A run that starts within this long of START uses START's count and fields instead of asking again: the
 * row limit was checked then, and an index reloaded in between is as likely a moment before START as after.
 * Every later run (a retry is at least a second's backoff away, a stalled one a lock's duration) checks again.
 */
const CHECK_FRESH_MS = 1000;

/**
 * EXPORTS.START: checks the method's params (and a search's count) before any work, records the export as
 * queued and adds its job to the deployment's queue. `run` is the job's run, on whichever gateway's worker
 * takes it: at most `perUser` of a user's at a time per process. A search is written by the query service's
 * engine straight to the run's partial file; a crosstab, bounded by its own limits, is the table the
 * crosstab renders, written as it answered. Only a finished file is published where downloads read it.
 */
export class StartExportUseCase {
  private readonly running = new Map<string, number>();
  /** Each user's STARTs one after another in this process, so that many at once cannot pass the cap together. */
  private readonly starting = new Map<string, Promise<unknown>>();

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
    // A user at the cap is refused before the plan asks the query service anything; enqueue checks again.
    await this.pendingOf(caller.userId);
    const { checked } = await this.plan(caller, input, trace);
    const user = caller.userId;
    const before = this.starting.get(user) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(() => this.enqueue(caller, input, trace, checked));
    const settled = mine.catch(() => undefined);
    this.starting.set(user, settled);
    void settled.then(() => {
      if (this.starting.get(user) === settled) this.starting.delete(user);
    });
    return mine;
  }

  /** Records the export and queues its job, at the owner's turn, unless the owner has as many as allowed. */
  private async enqueue(
    caller: Caller,
    input: ExportInput,
    trace: RequestTrace,
    checked: SearchCheck | undefined,
  ): Promise<{ exportId: string }> {
    const pending = await this.pendingOf(caller.userId);
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
      // Only a search's own run uses the check: a report's is asked again (its saved query may change).
      const carried = input.method === 'QUERIES.EXECUTE' && checked ? { checked } : {};
      await this.jobs.add({ exportId: id, caller, ...input, requestId: trace.requestId, ...carried }, pending + 1);
    } catch (err) {
      await this.store.remove(id, input.format, true).catch(() => undefined);
      throw err;
    }
    return { exportId: id };
  }

  /** The user's exports queued or running; a 429 naming QUARRY_EXPORT_MAX_PER_USER when they are as many as it allows. */
  private async pendingOf(userId: string): Promise<number> {
    const pending = (await this.store.list()).filter(
      (r) => r.userId === userId && (r.state === 'queued' || r.state === 'running'),
    ).length;
    if (pending >= this.limits.maxPerUser)
      throw new AppError(
        'RATE_LIMITED',
        `You have ${pending} exports queued or running, as many as QUARRY_EXPORT_MAX_PER_USER (${this.limits.maxPerUser}) allows; start another once one has finished`,
        { retryAfterSeconds: 10 },
      );
    return pending;
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
      const fresh = job.checked && this.now() - job.checked.at <= CHECK_FRESH_MS ? job.checked : undefined;
      // Whatever an earlier run of this export left goes first; the plan is not held up by it. Both are
      // settled before anything else, so a refused plan's 'failed' is never overwritten by this 'running'.
      const [planned, cleared] = await Promise.allSettled([
        this.plan(caller, job, { requestId: job.requestId }, fresh),
        this.store
          .remove(id, format, false)
          .then(() => this.store.update(id, { state: 'running', rowsWritten: 0, bytes: 0 })),
      ]);
      if (cleared.status === 'rejected') throw cleared.reason;
      if (planned.status === 'rejected') throw planned.reason;
      const { produce, columns } = planned.value;
      // Rows the run reports itself, where its file cannot tell them (a workbook being written).
      let reported: number | undefined;
      // Asked before the first byte too: an export shorter than a progress tick is never checked otherwise.
      const free = await this.store.freeBytes();
      if (free < this.limits.minFreeBytes) throw new ExportFailed(this.shortOfSpace(free, 'nothing was written'));
      progress = this.follow(id, run, format, columns, stop, () => reported);
      const rows = await produce(id, run, stop.signal, (written) => (reported = written));
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
      // Stopped by this run itself (the volume short of space): its own failure, whatever the cancelled
      // call then says (a cancelled gRPC call reads as UNAVAILABLE).
      const stoppedItself = stop.signal.aborted;
      stop.abort();
      await progress;
      // A partial file is never served: it goes.
      await this.store.remove(id, format, false).catch(() => undefined);
      // This process is stopping, or a service could not be reached for the moment (its answer says so):
      // the job goes back to the queue and runs again, here or on another gateway, within its attempts.
      if (signal.aborted || (!stoppedItself && err instanceof AppError && err.code === 'UNAVAILABLE')) {
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

  private shortOfSpace(free: number, outcome: string): string {
    return `the exports volume has ${Math.floor(free / 1_048_576)} MB free, less than QUARRY_EXPORT_MIN_FREE_MB (${Math.floor(this.limits.minFreeBytes / 1_048_576)}); ${outcome}`;
  }

  /**
   * Until `stop` aborts: how far the run's file got, into the record, and the volume's free space, which
   * stops the run (with its reason) before the disk is full.
   */
  private async follow(
    id: string,
    run: string,
    format: ExportFormat,
    columns: number | undefined,
    stop: AbortController,
    reported: () => number | undefined,
  ): Promise<void> {
    const watch = this.store.watch(id, run, format, columns);
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
          stop.abort(new ExportFailed(this.shortOfSpace(free, 'the partial file was removed')));
          return;
        }
        // A read catching up with a file written faster than it reads stops when the run ends: the run's
        // outcome waits for this loop, and the file's count is then the run's own.
        const sofar = await watch.read(stop.signal);
        if (stop.signal.aborted) return;
        const rows = reported() ?? sofar.rows;
        await this.store.update(id, { bytes: sofar.bytes, ...(rows !== undefined ? { rowsWritten: rows } : {}) });
      } catch {
        // Progress is a courtesy: the run's own outcome says whether it worked.
      }
    }
  }

  /** Everything a caller can get wrong is refused here, before the export is recorded. */
  private async plan(
    caller: Caller,
    input: ExportInput,
    trace: RequestTrace,
    checked?: SearchCheck,
  ): Promise<ExportPlan & { checked?: SearchCheck }> {
    if (input.params.saveReport !== undefined)
      throw AppError.invalid('params.saveReport: an export saves no report; save it with the method itself');
    if (input.method === 'QUERIES.EXECUTE') {
      const { complete } = readParams('QUERIES.EXECUTE', input.params, 'params');
      return this.planSearch(caller, { search: complete }, input.format, trace, checked);
    }
    if (input.method === 'CROSSTAB.EXECUTE')
      return {
        produce: planCrosstabExport(
          this.crosstab,
          this.store,
          caller,
          input.params,
          'params',
          input.format,
          trace,
          this.limits.maxRows,
        ),
      };
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
    const params = savedCrosstabForExport(saved, input.format);
    return {
      produce: planCrosstabExport(
        this.crosstab,
        this.store,
        caller,
        params,
        undefined,
        input.format,
        trace,
        this.limits.maxRows,
        asOfVersion,
      ),
    };
  }

  private async planSearch(
    caller: Caller,
    req: SearchExportRequest,
    format: ExportFormat,
    trace: RequestTrace,
    known?: SearchCheck,
  ): Promise<ExportPlan & { checked: SearchCheck }> {
    const converter = this.converter;
    if (format === 'pdf')
      throw AppError.invalid('format: a search is exported as csv, jsonl, parquet or xlsx; pdf prints a crosstab');
    if (format === 'xlsx' && !converter)
      throw AppError.invalid('format: a search is exported as csv, jsonl or parquet here; xlsx is not available');
    // A Parquet file's progress is counted from its pages, which need its columns; a workbook's header is
    // the fields as this caller sees them. Asked beside the count: each is a call to the query service.
    const fieldsOf = format === 'parquet' || format === 'xlsx';
    const at = this.now();
    const [count, fields] = known
      ? [known.count, known.fields]
      : await Promise.all([
          this.searches.count(caller, req, trace),
          fieldsOf
            ? indexFields(this.services, caller, req.search.index, trace).then((all) => all.map((f) => f.name))
            : [],
        ]);
    const checked = known ?? { at, count, fields };
    if (count > this.limits.maxRows)
      throw AppError.invalid(
        `The export would hold ${count} records, more than QUARRY_EXPORT_MAX_ROWS (${this.limits.maxRows}); narrow the query`,
      );
    if (format === 'csv' || format === 'jsonl')
      return { produce: (id, run, signal) => this.write(caller, req, format, id, run, signal, trace), checked };
    if (format === 'parquet' || !converter)
      return {
        produce: (id, run, signal) => this.write(caller, req, 'parquet', id, run, signal, trace),
        columns: fields.length,
        checked,
      };
    // The engine writes JSON Lines beside the partial file; the workbook is streamed from it (a new sheet
    // at Excel's row limit), counting the rows it has written.
    return {
      produce: async (id, run, signal, rows) => {
        // The JSON Lines are a run's partial file of their own (hex, like every run), which removal sweeps too.
        const stagedRun = `${run}0`;
        try {
          const written = await this.write(caller, req, 'jsonl', id, stagedRun, signal, trace);
          const staged = this.store.partialPath(id, stagedRun);
          await converter.toXlsx(staged, this.store.partialPath(id, run), fields, req.search.index, { rows, signal });
          return written;
        } finally {
          await this.store.discardPartial(id, stagedRun);
        }
      },
      checked,
    };
  }

  private write(
    caller: Caller,
    req: SearchExportRequest,
    format: 'csv' | 'jsonl' | 'parquet',
    id: string,
    run: string,
    signal: AbortSignal,
    trace: RequestTrace,
  ): Promise<number> {
    return this.searches.write(caller, req, format, this.store.partialPath(id, run), { ...trace, signal });
  }
}

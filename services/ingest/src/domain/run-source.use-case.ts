import { randomBytes } from 'node:crypto';
import { AppError, abortReason } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { IndexEntry } from '@quarry/metadata-store';
import type { DeclaredType, IndexLoader, LoadProgress } from '../ports/index-loader.port';
import type { OwnerRights } from '../ports/owner-rights.port';
import type { RunStaging } from '../ports/run-staging.port';
import type { SecretBox } from '../ports/secret-box.port';
import type { SourceJob, SourceJobOutcome, SourceJobs } from '../ports/source-jobs.port';
import type { SourceConnection, SourceReaders } from '../ports/source-reader.port';
import type { SourceRecord, SourceRunRecord, SourceStore } from '../ports/source-store.port';
import { cursorSubject, type SourcesUseCases } from './sources.use-cases';
import { checkWrite, inUploadTerms } from './upload-records.use-case';

export interface RunSourceSettings {
  /** How long a run holds its source's claim past its worker's last renewal (every watchMs). */
  claimTtlMs: number;
  /** How often a run checks that its source still exists and renews its claim. */
  watchMs: number;
  /** How long after it was queued a run may wait for another load of its index to end before it fails. */
  lockWaitMs: number;
  /** The claim a run waiting for the load lock keeps meanwhile (as a queued run's). */
  queuedClaimTtlMs: number;
}

/** The loader speaks the CLI's flags; a source's owner set them as load options. */
function inSourceTerms(detail: string): string {
  return inUploadTerms(detail)
    .replace(/onError=skip/g, 'load.onError "skip"')
    .replace(/maxErrors=(\d+)/g, 'load.maxErrors $1')
    .replace(/mode=append/g, 'refresh.mode "append"');
}

/** How soon a cron's run that waits for the index's load lock is taken up again. */
const LATER_MS = 1_000;

/** An abort is not a failure of the load: its reason says why the run stopped. */
class LoadLockBusy extends Error {}

/**
 * One run of a source, as the job worker takes it: the source read into a staged file, loaded by the
 * loader of `quarry index load`, one version published or nothing. A run's outcome is recorded on its run,
 * whatever it is; the job itself only fails when the run record cannot be written.
 */
export class RunSourceUseCase {
  constructor(
    private readonly store: SourceStore,
    private readonly jobs: Pick<SourceJobs, 'enqueue'>,
    private readonly readers: SourceReaders,
    private readonly loader: IndexLoader,
    /** The index's kept versions: their origin says which source run published each, and its cursor. */
    private readonly published: { listIndexVersions(name: string): Promise<IndexEntry[]> },
    private readonly rights: OwnerRights,
    private readonly box: SecretBox,
    private readonly sources: Pick<SourcesUseCases, 'track'>,
    private readonly staging: RunStaging,
    private readonly settings: RunSourceSettings,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async execute(job: SourceJob): Promise<SourceJobOutcome> {
    const source = await this.store.get(job.sourceId);
    if (!source) return 'done';
    let run: SourceRunRecord | null;
    if (job.runId) {
      run = await this.store.getRun(source.id, job.runId);
      // A run taken again after its worker died finds its record running: it runs again from the start.
      if (!run || run.state === 'done' || run.state === 'failed') return 'done';
      if (!(await this.store.renew(source.id, run.runId, this.settings.claimTtlMs))) {
        if (!(await this.store.claim(source.id, run.runId, this.settings.claimTtlMs))) return 'later';
      }
      // Its worker died after the publish: the run is done, and running it again would append twice.
      const entry = await this.lastPublished(source);
      if (entry?.origin?.runId === run.runId) {
        try {
          await this.recordPublished(source, run, entry);
        } finally {
          await this.store.release(source.id, run.runId);
        }
        return 'done';
      }
    } else {
      const runId = randomBytes(16).toString('hex');
      // The cron's turn while another run holds the source: that run is this refresh.
      if (!(await this.store.claim(source.id, runId, this.settings.claimTtlMs))) {
        this.log.info({ sourceId: source.id }, 'scheduled refresh skipped: a run of the source is under way');
        return 'done';
      }
      run = {
        runId,
        sourceId: source.id,
        state: 'queued',
        trigger: 'schedule',
        mode: source.refresh.mode,
        rowsRead: 0,
        loaded: 0,
        rejected: 0,
        queuedAt: this.now().toISOString(),
      };
    }
    const controller = new AbortController();
    const untrack = this.sources.track(source.id, controller);
    const watch = setInterval(() => void this.watch(source.id, run.runId, controller), this.settings.watchMs);
    watch.unref();
    let waits = false;
    try {
      const outcome = await this.perform(source, run, controller.signal, Boolean(job.runId));
      waits = outcome !== 'done';
      return outcome === 'requeued' ? 'done' : outcome;
    } finally {
      clearInterval(watch);
      untrack();
      // A run that waits for the load lock keeps its source (with the queued claim's lease): a second run
      // started meanwhile would read from the same cursor and append what this one is about to.
      if (waits) await this.store.renew(source.id, run.runId, this.settings.queuedClaimTtlMs).catch(() => false);
      else await this.store.release(source.id, run.runId);
    }
  }

  /** The newest published version this source made (a later upload's version may hide it from getIndex). */
  private async lastPublished(source: SourceRecord): Promise<IndexEntry | undefined> {
    const versions = await this.published.listIndexVersions(source.index);
    for (let i = versions.length - 1; i >= 0; i--) if (versions[i]!.origin?.sourceId === source.id) return versions[i];
    return undefined;
  }

  /**
   * The bound an append reads past: the one the newest version this source published holds (it was
   * written with the rows), else the one kept beside the source, if either is of this subject.
   */
  private async lastCursor(source: SourceRecord, subject: string): Promise<string | undefined> {
    const origin = (await this.lastPublished(source))?.origin;
    if (origin) return origin.cursor?.of === subject ? origin.cursor.value : undefined;
    const mark = await this.store.cursor(source.id);
    return mark && mark.of === subject ? mark.value : undefined;
  }

  /** A run found published when it was taken again: recorded done with that version, its cursor kept. */
  private async recordPublished(source: SourceRecord, run: SourceRunRecord, entry: IndexEntry): Promise<void> {
    const cursor = entry.origin?.cursor;
    if (cursor) await this.store.setCursor(source.id, cursor).catch(() => undefined);
    await this.finish(
      { ...run, state: 'running', ...(cursor ? { cursorMax: cursor.value } : {}) },
      { state: 'done', rowsRead: run.rowsRead, loaded: run.loaded, rejected: run.rejected, version: entry.version },
    );
    this.log.info({ sourceId: source.id, runId: run.runId, version: entry.version }, 'source run found published');
  }

  private async watch(sourceId: string, runId: string, controller: AbortController): Promise<void> {
    try {
      if (!(await this.store.get(sourceId)))
        controller.abort(AppError.conflict('The source was deleted while it ran; nothing was published'));
      // Its claim lapsed (Redis lost it, or the run was marked lost): another run may hold the source now.
      else if (!(await this.store.renew(sourceId, runId, this.settings.claimTtlMs)))
        controller.abort(
          AppError.conflict('The run lost its hold on the source (its claim lapsed); nothing was published'),
        );
    } catch {
      // Redis away for a moment: the claim lasts claimTtlMs, and the next tick tries again.
    }
  }

  private connectionOf(source: SourceRecord): SourceConnection {
    const secret = source.secret
      ? (JSON.parse(this.box.open(source.secret)) as { password?: string; url?: string })
      : {};
    const c = source.connection;
    if (c.url !== undefined) return { url: secret.url ?? c.url };
    return {
      host: c.host ?? '',
      ...(c.port !== undefined ? { port: c.port } : {}),
      database: c.database ?? '',
      user: c.user ?? '',
      ...(secret.password !== undefined ? { password: secret.password } : {}),
      ...(c.ssl !== undefined ? { ssl: c.ssl } : {}),
    };
  }

  /** `later`: the job waits for the lock as it is; `requeued`: a cron's run waits as a job of its own. */
  private async perform(
    source: SourceRecord,
    queued: SourceRunRecord,
    signal: AbortSignal,
    ownJob: boolean,
  ): Promise<SourceJobOutcome | 'requeued'> {
    const run: SourceRunRecord = { ...queued, state: 'running', startedAt: this.now().toISOString() };
    await this.store.putRun(run);
    const { file, discard } = this.staging.place(run.runId);
    const progress: LoadProgress = { rejected: 0, rejects: [] };
    try {
      const caller = await this.rights.callerOf(source.tokenHash).catch((err: unknown) => {
        throw err instanceof AppError
          ? AppError.forbidden(
              `The source runs with the rights of the token that created or last changed it: ${err.detail} (its owner changing it with another token moves it there)`,
            )
          : err;
      });
      if (!caller.scopes.includes('indexes:write'))
        throw AppError.forbidden('The token that created the source no longer holds the indexes:write scope');
      const mode = source.refresh.mode;
      const cursorColumn = mode === 'append' ? source.refresh.cursor : undefined;
      const subject = cursorSubject(source);
      const after = cursorColumn ? await this.lastCursor(source, subject) : undefined;
      if (after !== undefined) run.cursorAfter = after;
      const read = await this.readers.read(
        {
          kind: source.kind,
          connection: this.connectionOf(source),
          ...(source.query !== undefined ? { query: source.query } : {}),
          ...(source.table !== undefined ? { table: source.table } : {}),
        },
        {
          file,
          ...(cursorColumn ? { cursor: { column: cursorColumn, ...(after !== undefined ? { after } : {}) } } : {}),
          signal,
        },
      );
      if (signal.aborted) throw abortReason(signal);
      const noRows = read.rows === 0 && read.format !== 'json' && read.format !== 'parquet';
      if (noRows && mode === 'replace')
        throw AppError.invalid(
          'The source returned no rows: nothing was published (a replace with none would empty the index); the previous version keeps serving',
        );
      if (noRows) {
        await this.finish(run, { state: 'done', rowsRead: 0, loaded: 0, rejected: 0 });
        return 'done';
      }
      const types: Record<string, DeclaredType> = {};
      for (const c of read.columns) if (c.type) types[c.name] = c.type === 'timestamp' ? 'date' : c.type;
      const loaded = await this.loader
        .load(
          {
            index: source.index,
            file: read.file,
            format: read.format,
            label: `source "${source.name}"`,
            mode,
            ...(mode === 'upsert' && source.refresh.key ? { key: source.refresh.key } : {}),
            onError: source.load.onError,
            ...(source.load.maxErrors !== undefined ? { maxErrors: source.load.maxErrors } : {}),
            types: { ...types, ...source.load.types },
            ...(source.load.views ? { views: source.load.views } : {}),
            owner: source.ownerId,
            origin: {
              sourceId: source.id,
              runId: run.runId,
              ...(cursorColumn && read.cursorMax !== undefined
                ? { cursor: { value: read.cursorMax, of: subject } }
                : {}),
            },
            authorize: (current) => checkWrite(caller, source.index, current),
            signal,
          },
          progress,
        )
        .catch((err: unknown) => {
          // Another load holds the index for now: the run waits its turn rather than fail, for so long.
          const busy = err instanceof AppError && err.code === 'CONFLICT' && err.retryAfterSeconds !== undefined;
          if (busy && !signal.aborted) {
            const waited = this.now().getTime() - Date.parse(queued.queuedAt);
            if (waited < this.settings.lockWaitMs) throw new LoadLockBusy();
            throw AppError.conflict(
              `Index "${source.index}" stayed locked by another load for ${Math.round(waited / 60_000)} min; nothing was published`,
            );
          }
          throw err;
        });
      if (cursorColumn && read.cursorMax !== undefined) {
        run.cursorMax = read.cursorMax;
        // The published version holds the cursor too (its origin): this copy failing loses nothing.
        await this.store
          .setCursor(source.id, { value: read.cursorMax, of: subject })
          .catch((err: unknown) =>
            this.log.warn({ sourceId: source.id, err: String(err) }, 'source cursor not saved; the version keeps it'),
          );
      }
      await this.finish(run, {
        state: 'done',
        rowsRead: loaded.rowsRead,
        loaded: loaded.rowsRead - loaded.rejected,
        rejected: loaded.rejected,
        version: loaded.entry.version,
      });
      this.log.info(
        { sourceId: source.id, runId: run.runId, version: loaded.entry.version, rows: loaded.rowsRead },
        'source run published',
      );
      return 'done';
    } catch (err) {
      if (err instanceof LoadLockBusy) {
        await this.store.putRun({ ...queued, state: 'queued' });
        // A job that names its run waits as it is (moved back for a moment); a cron's job names none, so the
        // refresh waits as a job of its own run, keeping its runId.
        if (ownJob) return 'later';
        await this.jobs.enqueue({ sourceId: source.id, runId: run.runId }, LATER_MS);
        return 'requeued';
      }
      const reason = signal.aborted ? abortReason(signal) : err;
      const detail =
        reason instanceof AppError && reason.code !== 'INTERNAL'
          ? inSourceTerms(reason.detail)
          : 'The run failed on an error of the server (its log has the cause); nothing was published';
      if (!(reason instanceof AppError) || reason.code === 'INTERNAL')
        this.log.error({ sourceId: source.id, runId: run.runId, err: String(err) }, 'source run failed');
      await this.finish(run, {
        state: 'failed',
        rowsRead: progress.rowsRead ?? 0,
        loaded: 0,
        rejected: progress.rejected,
        error: detail,
      });
      return 'done';
    } finally {
      discard();
    }
  }

  private async finish(
    run: SourceRunRecord,
    outcome: Pick<SourceRunRecord, 'state' | 'rowsRead' | 'loaded' | 'rejected' | 'version' | 'error'>,
  ): Promise<void> {
    // A source deleted meanwhile keeps no runs: the record is not written back.
    if (!(await this.store.get(run.sourceId))) return;
    await this.store.putRun({ ...run, ...outcome, endedAt: this.now().toISOString() });
  }
}

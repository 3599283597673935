import { randomBytes } from 'node:crypto';
import {
  DEFAULT_TIME_ZONE,
  sourceShapeProblems,
  type Caller,
  type SourceConnectionParams,
  type SourceRunSummary,
  type SourcesCreateParams,
  type SourcesUpdateParams,
  type SourceSummary,
} from '@quarry/contract';
import { AppError, quoteInput } from '@quarry/errors';
import { checkCron } from '@quarry/runtime';
import type { IndexEntry } from '@quarry/metadata-store';
import type { SecretBox } from '../ports/secret-box.port';
import type { SourceJobs } from '../ports/source-jobs.port';
import type { SourceReaders } from '../ports/source-reader.port';
import type { SourceRecord, SourceRunRecord, SourceStore } from '../ports/source-store.port';
import { checkWrite } from './upload-records.use-case';

export interface SourcesLimits {
  perUser: number;
  minIntervalSeconds: number;
  /** How long a queued run holds its source (a worker taking it holds it as long as it renews the claim). */
  claimTtlMs: number;
}

/** How long a queued run is given to have its job before a missing job counts as lost. */
const QUEUE_GRACE_MS = 60_000;

/** Why a run that will not end by itself is marked failed: its worker, or its job, is gone. */
const LOST_RUN =
  'The run stopped without an outcome (its worker or its queued job was lost, as when the queue’s Redis restarts empty); nothing was published';

/** The caller of a SOURCES.* method, with the hash of the token that called (runs run with its rights). */
export interface SourceCaller {
  caller: Caller;
  tokenHash: string;
}

/**
 * What a run of this source reads the cursor of: a new column, query, table, connection, index or mode
 * starts the cursor afresh (the first run after reads every row).
 */
export function cursorSubject(
  s: Pick<SourceRecord, 'refresh' | 'query' | 'table' | 'kind' | 'connection' | 'index'>,
): string {
  return JSON.stringify([
    s.refresh.cursor ?? '',
    s.query ?? '',
    s.table ?? '',
    s.kind,
    s.connection,
    s.index,
    s.refresh.mode,
  ]);
}

const newId = () => randomBytes(16).toString('hex');

/** The secret parts of a connection: the password, and a URL whole when it carries one. */
function splitSecret(c: SourceConnectionParams): {
  shown: SourceRecord['connection'];
  secret: { password?: string; url?: string } | undefined;
} {
  if (c.url !== undefined) {
    let shown = c.url;
    let carries = false;
    try {
      const u = new URL(c.url);
      // A user name alone (`https://TOKEN@host`) and a query (`?access_token=…`, a presigned URL's
      // signature) carry credentials as often as a password does.
      if (u.password !== '' || u.username !== '' || u.search !== '') {
        carries = true;
        if (u.username !== '') u.username = u.password !== '' ? u.username : '***';
        if (u.password !== '') u.password = '***';
        if (u.search !== '') u.search = '***';
        shown = u.toString();
      }
    } catch {
      // Not a URL with parts (a path): nothing in it to hide.
    }
    return { shown: { url: shown }, secret: carries ? { url: c.url } : undefined };
  }
  const { password, ...rest } = c;
  return { shown: rest, secret: password !== undefined ? { password } : undefined };
}

export function runView(r: SourceRunRecord): SourceRunSummary {
  const { sourceId: _sourceId, ...view } = r;
  return view;
}

/**
 * SOURCES.CREATE, FIND, UPDATE, DELETE, RUN and RUNS: sources kept per owner, checked as they are made
 * (the shape, the host policy, the cron, who may write the index), runs queued as jobs. Another user's
 * source is as unknown as one that never existed, unless the caller is an admin.
 */
export class SourcesUseCases {
  /** Runs under way in this process, by source: a delete stops them at once. */
  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly store: SourceStore,
    private readonly jobs: SourceJobs,
    private readonly readers: SourceReaders,
    private readonly box: SecretBox,
    private readonly catalog: {
      getIndex(name: string): Promise<IndexEntry | null>;
      listIndexVersions(name: string): Promise<IndexEntry[]>;
    },
    private readonly limits: SourcesLimits,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The abort of a run of this source under way in this process, for RunSourceUseCase. */
  track(sourceId: string, controller: AbortController): () => void {
    this.running.set(sourceId, controller);
    return () => {
      if (this.running.get(sourceId) === controller) this.running.delete(sourceId);
    };
  }

  private static mayWrite(caller: Caller): void {
    if (!caller.scopes.includes('indexes:write'))
      throw AppError.forbidden('Sources need a token with the indexes:write scope');
  }

  private async visible(caller: Caller, sourceId: string): Promise<SourceRecord> {
    const s = await this.store.get(sourceId);
    if (!s || (!caller.admin && s.ownerId !== caller.userId))
      throw AppError.notFound(`Source ${quoteInput(sourceId)} not found`);
    return s;
  }

  /** Everything a run needs that can be wrong before it runs: checked on create and update. */
  private async check(caller: Caller, s: SourceRecord, plainSecret: { password?: string; url?: string } | undefined) {
    for (const p of sourceShapeProblems(s, (k) => [k]))
      throw AppError.invalid(p.message.replace('{param}', p.path.join('.')));
    if (s.refresh.cron !== undefined) {
      try {
        checkCron(s.refresh.cron, s.refresh.timeZone, this.limits.minIntervalSeconds, this.now());
      } catch (err) {
        throw err instanceof AppError ? AppError.invalid(`refresh.${err.detail}`) : err;
      }
    }
    try {
      await this.readers.admit({ kind: s.kind, connection: { ...s.connection, ...plainSecret } as never });
    } catch (err) {
      // A refused host is a parameter the caller got wrong: a 400 naming it, not a 403 about their rights.
      if (err instanceof AppError && err.code === 'FORBIDDEN') throw AppError.invalid(`connection: ${err.detail}`);
      throw err;
    }
    checkWrite(caller, s.index, await this.catalog.getIndex(s.index));
  }

  private async summary(s: SourceRecord): Promise<SourceSummary> {
    const [last] = await this.store.runs(s.id, 1);
    const next = s.refresh.cron !== undefined ? await this.jobs.nextRun(s.id) : null;
    return {
      sourceId: s.id,
      name: s.name,
      index: s.index,
      kind: s.kind,
      owner: s.ownerName,
      connection: { ...s.connection, hasPassword: s.hasPassword },
      ...(s.query !== undefined ? { query: s.query } : {}),
      ...(s.table !== undefined ? { table: s.table } : {}),
      refresh: s.refresh,
      load: s.load,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      ...(next ? { nextRunAt: next } : {}),
      ...(last ? { lastRun: runView(last) } : {}),
    };
  }

  async create({ caller, tokenHash }: SourceCaller, p: SourcesCreateParams): Promise<{ sourceId: string }> {
    SourcesUseCases.mayWrite(caller);
    const { shown, secret } = splitSecret(p.connection);
    const at = this.now().toISOString();
    const source: SourceRecord = {
      id: newId(),
      ownerId: caller.userId,
      ownerName: caller.userName,
      tokenHash,
      name: p.name.trim(),
      index: p.index,
      kind: p.kind,
      connection: shown,
      ...(secret ? { secret: this.box.seal(JSON.stringify(secret)) } : {}),
      hasPassword: secret !== undefined,
      ...(p.query !== undefined ? { query: p.query } : {}),
      ...(p.table !== undefined ? { table: p.table } : {}),
      refresh: {
        ...(p.refresh?.cron !== undefined ? { cron: p.refresh.cron.trim() } : {}),
        timeZone: p.refresh?.timeZone ?? DEFAULT_TIME_ZONE,
        mode: p.refresh?.mode ?? 'replace',
        ...(p.refresh?.cursor !== undefined ? { cursor: p.refresh.cursor } : {}),
        ...(p.refresh?.key !== undefined ? { key: p.refresh.key } : {}),
      },
      load: { ...p.load, onError: p.load?.onError ?? 'fail' },
      createdAt: at,
      updatedAt: at,
    };
    await this.check(caller, source, secret);
    const verdict = await this.store.insert(source, this.limits.perUser);
    if (verdict === 'limit')
      throw AppError.invalid(
        `You have ${this.limits.perUser} sources already, the most one user may have (QUARRY_SOURCES_PER_USER)`,
      );
    if (verdict === 'name-taken') throw AppError.conflict(`You already have a source named ${quoteInput(source.name)}`);
    if (source.refresh.cron !== undefined) await this.scheduleWhileKept(source);
    return { sourceId: source.id };
  }

  /**
   * Schedules the source's cron, then looks again: a DELETE that ran in between has unscheduled before this
   * scheduled, and the cron it would leave behind (ticking for a source that is gone) is taken away.
   */
  private async scheduleWhileKept(s: SourceRecord): Promise<void> {
    if (s.refresh.cron === undefined) return;
    await this.jobs.schedule(s.id, s.refresh.cron, s.refresh.timeZone);
    if (!(await this.store.get(s.id))) await this.jobs.unschedule(s.id);
  }

  async find(
    { caller }: SourceCaller,
    p: { sourceId?: string; index?: string },
  ): Promise<{ sources: SourceSummary[] }> {
    SourcesUseCases.mayWrite(caller);
    const found = p.sourceId
      ? [await this.visible(caller, p.sourceId)]
      : await this.store.list(caller.admin ? undefined : caller.userId);
    const wanted = found
      .filter((s) => p.index === undefined || s.index === p.index)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { sources: await Promise.all(wanted.map((s) => this.summary(s))) };
  }

  async update({ caller, tokenHash }: SourceCaller, p: SourcesUpdateParams): Promise<SourceSummary> {
    SourcesUseCases.mayWrite(caller);
    const before = await this.visible(caller, p.sourceId);
    let connection = before.connection;
    // The kept secret stays sealed as it is: never opened here, so a source whose key changed can still be
    // updated, and given its password again (its runs say so).
    let sealed = before.secret;
    let secret: { password?: string; url?: string } | undefined;
    if (p.connection) {
      const split = splitSecret(p.connection);
      const sameTarget =
        p.connection.url === undefined &&
        before.connection.url === undefined &&
        p.connection.host === before.connection.host &&
        p.connection.user === before.connection.user &&
        p.connection.database === before.connection.database;
      connection = split.shown;
      secret = split.secret;
      // A password left out is kept only for the same host, user and database: never sent somewhere new.
      sealed = secret ? this.box.seal(JSON.stringify(secret)) : sameTarget ? before.secret : undefined;
    }
    const refresh =
      p.refresh === null
        ? { timeZone: DEFAULT_TIME_ZONE, mode: 'replace' as const }
        : p.refresh
          ? {
              ...(p.refresh.cron !== undefined ? { cron: p.refresh.cron.trim() } : {}),
              timeZone: p.refresh.timeZone ?? DEFAULT_TIME_ZONE,
              mode: p.refresh.mode,
              ...(p.refresh.cursor !== undefined ? { cursor: p.refresh.cursor } : {}),
              ...(p.refresh.key !== undefined ? { key: p.refresh.key } : {}),
            }
          : before.refresh;
    const { query: _q, table: _t, ...rest } = before;
    const readsChanged = p.query !== undefined || p.table !== undefined;
    const after: SourceRecord = {
      ...rest,
      // Its owner's change binds the runs to the token that made it (a revoked creator token is replaced
      // so); an admin's change leaves them on the owner's, never on the admin's wider rights.
      ...(caller.userId === before.ownerId ? { tokenHash } : {}),
      ...(p.name !== undefined ? { name: p.name.trim() } : {}),
      ...(p.index !== undefined ? { index: p.index } : {}),
      connection,
      hasPassword: sealed !== undefined,
      ...(readsChanged
        ? { ...(p.query !== undefined ? { query: p.query } : {}), ...(p.table !== undefined ? { table: p.table } : {}) }
        : {
            ...(before.query !== undefined ? { query: before.query } : {}),
            ...(before.table !== undefined ? { table: before.table } : {}),
          }),
      refresh,
      load: p.load ? { ...p.load, onError: p.load.onError ?? 'fail' } : before.load,
      updatedAt: this.now().toISOString(),
    };
    if (sealed) after.secret = sealed;
    else delete after.secret;
    await this.check(caller, after, secret);
    const verdict = await this.store.update(after, before.name);
    if (verdict === 'gone') throw AppError.notFound(`Source ${quoteInput(p.sourceId)} not found`);
    if (verdict === 'name-taken') throw AppError.conflict(`You already have a source named ${quoteInput(after.name)}`);
    if (cursorSubject(after) !== cursorSubject(before)) await this.store.forgetCursor(after.id);
    if (after.refresh.cron !== undefined) await this.scheduleWhileKept(after);
    else if (before.refresh.cron !== undefined) await this.jobs.unschedule(after.id);
    return this.summary(after);
  }

  async delete({ caller }: SourceCaller, p: { sourceId: string }): Promise<{ sourceId: string; deleted: true }> {
    SourcesUseCases.mayWrite(caller);
    const s = await this.visible(caller, p.sourceId);
    await this.jobs.unschedule(s.id);
    if (!(await this.store.remove(s.id))) throw AppError.notFound(`Source ${quoteInput(p.sourceId)} not found`);
    // A run in another process notices within a second (RunSourceUseCase watches the source).
    this.running.get(s.id)?.abort(AppError.conflict('The source was deleted while it ran; nothing was published'));
    return { sourceId: s.id, deleted: true };
  }

  async run({ caller }: SourceCaller, p: { sourceId: string }): Promise<{ runId: string }> {
    SourcesUseCases.mayWrite(caller);
    const s = await this.visible(caller, p.sourceId);
    const runId = newId();
    if (!(await this.store.claim(s.id, runId, this.limits.claimTtlMs))) {
      const holder = await this.store.claimant(s.id);
      const held = holder ? await this.store.getRun(s.id, holder) : null;
      // A claim whose queued job is gone would hold the source until it lapses: its run is failed instead.
      const lost = held && (await this.lost(s, held, holder));
      if (!lost || !(await this.store.claim(s.id, runId, this.limits.claimTtlMs)))
        throw AppError.conflict(
          `A run of source ${quoteInput(s.name)} is already queued or running${holder ? ` (runId ${holder})` : ''}`,
        );
    }
    const queued: SourceRunRecord = {
      runId,
      sourceId: s.id,
      state: 'queued',
      trigger: 'manual',
      mode: s.refresh.mode,
      rowsRead: 0,
      loaded: 0,
      rejected: 0,
      queuedAt: this.now().toISOString(),
    };
    try {
      await this.store.putRun(queued);
      await this.jobs.enqueue({ sourceId: s.id, runId });
    } catch (err) {
      // The record must not stay queued for a job that was never added.
      const why = err instanceof AppError ? err.detail : 'the queue did not take it';
      await this.store
        .putRun({ ...queued, state: 'failed', endedAt: this.now().toISOString(), error: `Not queued: ${why}` })
        .catch(() => undefined);
      await this.store.release(s.id, runId).catch(() => undefined);
      throw err;
    }
    return { runId };
  }

  /**
   * Whether a queued or running run will never end by itself, and if so marks it failed. Running: it no
   * longer holds the source's claim (a worker renews it every second; it lapses when the worker dies).
   * Queued: nothing holds it and its job is not in the queue.
   */
  private async lost(s: SourceRecord, run: SourceRunRecord, claimant: string | null): Promise<boolean> {
    if (run.state !== 'queued' && run.state !== 'running') return false;
    if (run.state === 'running' && claimant === run.runId) return false;
    // A run queued a moment ago may not have its job yet (SOURCES.RUN writes the record, then queues it).
    if (run.state === 'queued' && this.now().getTime() - Date.parse(run.queuedAt) < QUEUE_GRACE_MS) return false;
    if (run.state === 'queued' && (await this.jobs.pending(run.runId))) return false;
    // Looked at again: the run may have ended, or been taken, since the listing was read.
    const now = await this.store.getRun(run.sourceId, run.runId);
    if (!now || now.state !== run.state || (await this.store.claimant(run.sourceId)) !== claimant) return false;
    const endedAt = this.now().toISOString();
    // Its worker may have died after the publish (the version says which run published it): then it is done.
    const versions = await this.catalog.listIndexVersions(s.index);
    const mine = versions.find((v) => v.origin?.sourceId === s.id && v.origin.runId === run.runId);
    if (mine)
      await this.store.putRun({
        ...now,
        state: 'done',
        endedAt,
        version: mine.version,
        ...(mine.origin?.cursor ? { cursorMax: mine.origin.cursor.value } : {}),
      });
    else await this.store.putRun({ ...now, state: 'failed', endedAt, error: LOST_RUN });
    await this.store.release(run.sourceId, run.runId);
    return true;
  }

  async runs({ caller }: SourceCaller, p: { sourceId: string; limit?: number }): Promise<{ runs: SourceRunSummary[] }> {
    SourcesUseCases.mayWrite(caller);
    const s = await this.visible(caller, p.sourceId);
    const runs = await this.store.runs(s.id, p.limit ?? 20);
    const open = runs.filter((r) => r.state === 'queued' || r.state === 'running');
    if (open.length > 0) {
      const claimant = await this.store.claimant(s.id);
      for (const r of open)
        if (await this.lost(s, r, claimant)) Object.assign(r, await this.store.getRun(s.id, r.runId));
    }
    return { runs: runs.map(runView) };
  }
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { Queue } from 'bullmq';
import type { Caller } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import type { IndexEntry } from '@quarry/metadata-store';
import { freePort } from '@quarry/runtime';
import { TestRedis } from '../../../../tests/support/redis';
import { AesSecretBox } from '../adapters/aes-secret-box.adapter';
import { BullMqSourceJobs, SOURCE_QUEUE } from '../adapters/bullmq-source-jobs.adapter';
import { FsRunStaging } from '../adapters/fs-run-staging.adapter';
import { RedisSourceStore } from '../adapters/redis-source-store.adapter';
import { unavailableWhenDown } from '../adapters/unavailable-when-down';
import type { IndexLoaded, IndexLoader, IndexLoadRequest } from '../ports/index-loader.port';
import type { SourceJobs } from '../ports/source-jobs.port';
import type { SourceReaders } from '../ports/source-reader.port';
import type { SourceRecord } from '../ports/source-store.port';
import { RunSourceUseCase } from './run-source.use-case';
import { SourcesUseCases } from './sources.use-cases';

/*
 * A run's life on the real store and queue (redis-server, BullMQ): runs that must wait for a load lock,
 * runs whose job or worker was lost, and runs that were never queued end with an outcome instead of
 * staying queued or running, or holding their source.
 */

/** A catalog with no index yet. */
const NO_INDEX = { getIndex: async () => null, listIndexVersions: async () => [] };

const LIMITS = { perUser: 100, minIntervalSeconds: 60, claimTtlMs: 3_600_000 };

const ann: Caller = {
  userId: 'u1',
  userName: 'ann',
  admin: false,
  indexes: ['*'],
  realms: [],
  scopes: ['indexes:write'],
};

const source = (id: string): SourceRecord => ({
  id,
  ownerId: 'u1',
  ownerName: 'ann',
  tokenHash: 'h',
  name: `source ${id}`,
  index: 'orders',
  kind: 'postgres',
  connection: { host: 'db.example.com', database: 'd', user: 'u' },
  hasPassword: false,
  table: 'orders',
  refresh: { timeZone: 'UTC', mode: 'replace' },
  load: { onError: 'fail' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

/** The bound each read was given (an append's cursor), in order. */
const boundsRead: Array<string | undefined> = [];

/** A reader that stages two rows (cursor max "2"); the host check admits everything (it has its own tests). */
const readers: SourceReaders = {
  admit: async () => undefined,
  read: async (_spec, { file, cursor }) => {
    boundsRead.push(cursor?.after);
    fs.writeFileSync(file, 'id\n1\n2\n');
    return { file, format: 'csv', rows: 2, columns: [], ...(cursor ? { cursorMax: `${boundsRead.length}` } : {}) };
  },
};

/**
 * A loader answering what the test says next: a lock held for now, a lasting conflict, or a publish, which
 * becomes the catalog's entry (with the request's origin, as the real catalog keeps it).
 */
class ScriptedLoader implements IndexLoader {
  next: 'busy' | 'conflict' | 'ok' = 'ok';
  version = 0;
  loads = 0;
  published: IndexEntry | null = null;
  async load(req: IndexLoadRequest): Promise<IndexLoaded> {
    this.loads += 1;
    if (this.next === 'busy') throw AppError.busy('Index "orders" is being loaded by another process', 1);
    if (this.next === 'conflict') throw AppError.conflict('The indexes were loaded into another search backend');
    this.version += 1;
    const entry = {
      name: req.index,
      version: this.version,
      recordCount: 2,
      ...(req.origin ? { origin: req.origin } : {}),
    } as IndexEntry;
    this.published = entry;
    return { entry, rowsRead: 2, rejected: 0, rejects: [], replaced: 0 };
  }
}

describe('a source run’s life on redis-server and BullMQ', () => {
  let server: TestRedis;
  let redis: IORedis;
  let queue: Queue;
  let store: RedisSourceStore;
  let jobs: BullMqSourceJobs;
  let loader: ScriptedLoader;
  let clock: number;
  let staging: string;
  const now = () => new Date(clock);
  const useCases = (j: SourceJobs = jobs) =>
    new SourcesUseCases(store, j, readers, { seal: (t) => t, open: (t) => t }, NO_INDEX, LIMITS, now);
  const runner = (sources: SourcesUseCases, runStore: RedisSourceStore = store) =>
    new RunSourceUseCase(
      runStore,
      jobs,
      readers,
      loader,
      { listIndexVersions: async () => (loader.published ? [loader.published] : []) },
      { callerOf: async () => ann },
      { seal: (t) => t, open: (t) => t },
      sources,
      new FsRunStaging(staging),
      { claimTtlMs: 30_000, watchMs: 60_000, lockWaitMs: 600_000, queuedClaimTtlMs: 3_600_000 },
      silentLogger(),
      now,
    );
  const me = { caller: ann, tokenHash: 'h' };

  beforeAll(async () => {
    server = new TestRedis(await freePort());
    await server.start();
    redis = new IORedis(server.url, { maxRetriesPerRequest: null });
    queue = new Queue(SOURCE_QUEUE, { connection: redis });
    store = new RedisSourceStore(redis);
    jobs = new BullMqSourceJobs(redis, server.url, silentLogger());
    staging = fs.mkdtempSync(path.join(os.tmpdir(), 'q-run-life-'));
  });
  afterAll(async () => {
    await jobs?.close();
    await queue?.close();
    redis?.disconnect();
    await server?.stop();
    fs.rmSync(staging, { recursive: true, force: true });
  });
  beforeEach(() => {
    boundsRead.length = 0;
    loader = new ScriptedLoader();
    clock = Date.parse('2026-06-01T00:00:00Z');
  });

  it('waits while the index’s load lock is held, and fails once it has waited lockWaitMs; a lasting conflict fails at once', async () => {
    expect(await store.insert(source('s1'), 100)).toBe('ok');
    const sources = useCases();
    const { runId } = await sources.run(me, { sourceId: 's1' });
    loader.next = 'busy';
    expect(await runner(sources).execute({ sourceId: 's1', runId })).toBe('later');
    expect(await store.getRun('s1', runId)).toMatchObject({ state: 'queued' });
    // It keeps its source while it waits: a second run would read from the same cursor.
    expect(await store.claimant('s1')).toBe(runId);
    await expect(sources.run(me, { sourceId: 's1' })).rejects.toMatchObject({ code: 'CONFLICT' });
    clock += 600_001;
    expect(await runner(sources).execute({ sourceId: 's1', runId })).toBe('done');
    expect(await store.getRun('s1', runId)).toMatchObject({
      state: 'failed',
      error: 'Index "orders" stayed locked by another load for 10 min; nothing was published',
    });
    // Not a lock: no wait at all, and the source is free for the next run.
    const second = await sources.run(me, { sourceId: 's1' });
    loader.next = 'conflict';
    expect(await runner(sources).execute({ sourceId: 's1', runId: second.runId })).toBe('done');
    expect(await store.getRun('s1', second.runId)).toMatchObject({
      state: 'failed',
      error: 'The indexes were loaded into another search backend',
    });
    expect(await store.claimant('s1')).toBeNull();
  });

  it('a cron’s run that must wait keeps its runId: one record, queued, then done', async () => {
    expect(await store.insert(source('s2'), 100)).toBe('ok');
    const sources = useCases();
    loader.next = 'busy';
    expect(await runner(sources).execute({ sourceId: 's2' })).toBe('done');
    const [waiting, ...others] = await store.runs('s2', 10);
    expect(others).toEqual([]);
    expect(waiting).toMatchObject({ state: 'queued', trigger: 'schedule' });
    expect(await jobs.pending(waiting!.runId)).toBe(true);
    expect(await store.claimant('s2')).toBe(waiting!.runId);
    // Waiting again, it waits in that job (moved back), not in a new one BullMQ would drop as a duplicate.
    expect(await runner(sources).execute({ sourceId: 's2', runId: waiting!.runId })).toBe('later');
    loader.next = 'ok';
    expect(await runner(sources).execute({ sourceId: 's2', runId: waiting!.runId })).toBe('done');
    const runs = await store.runs('s2', 10);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ runId: waiting!.runId, state: 'done', trigger: 'schedule', version: 1 });
  });

  it('fails a queued run whose job was lost, and a running run whose worker died, instead of holding the source', async () => {
    expect(await store.insert(source('s3'), 100)).toBe('ok');
    const sources = useCases();
    const first = await sources.run(me, { sourceId: 's3' });
    await expect(sources.run(me, { sourceId: 's3' })).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: `A run of source "source s3" is already queued or running (runId ${first.runId})`,
    });
    // The queue's Redis restarted empty: the job is gone, the claim and the record are not.
    await (await queue.getJob(`run-${first.runId}`))!.remove();
    // A run queued a moment ago may be between its record and its job: only past a minute is it lost.
    await expect(sources.run(me, { sourceId: 's3' })).rejects.toMatchObject({ code: 'CONFLICT' });
    clock += 61_000;
    const second = await sources.run(me, { sourceId: 's3' });
    expect(await store.getRun('s3', first.runId)).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^The run stopped without an outcome/),
    });
    expect(await store.claimant('s3')).toBe(second.runId);
    // A running run whose claim lapsed (its worker died): RUNS says it failed.
    await store.putRun({ ...(await store.getRun('s3', second.runId))!, state: 'running' });
    await store.release('s3', second.runId);
    const { runs } = await sources.runs(me, { sourceId: 's3' });
    expect(runs.map((r) => [r.runId, r.state])).toEqual([
      [second.runId, 'failed'],
      [first.runId, 'failed'],
    ]);
    // A run that holds its claim is left alone.
    const third = await sources.run(me, { sourceId: 's3' });
    await store.putRun({ ...(await store.getRun('s3', third.runId))!, state: 'running' });
    expect((await sources.runs(me, { sourceId: 's3' })).runs[0]).toMatchObject({
      runId: third.runId,
      state: 'running',
    });
  });

  it('a lost running run that had published (a cron run, say) is recorded done with its version, not failed', async () => {
    expect(await store.insert(source('s8'), 100)).toBe('ok');
    const runId = 'c'.repeat(32);
    const published = { name: 'orders', version: 9, origin: { sourceId: 's8', runId } } as IndexEntry;
    const sources = new SourcesUseCases(
      store,
      jobs,
      readers,
      { seal: (t) => t, open: (t) => t },
      { getIndex: async () => published, listIndexVersions: async () => [published] },
      LIMITS,
      now,
    );
    await store.putRun({
      runId,
      sourceId: 's8',
      state: 'running',
      trigger: 'schedule',
      mode: 'replace',
      rowsRead: 0,
      loaded: 0,
      rejected: 0,
      queuedAt: new Date(clock).toISOString(),
    });
    const { runs } = await sources.runs(me, { sourceId: 's8' });
    expect(runs[0]).toMatchObject({ runId, state: 'done', version: 9 });
    expect(runs[0]).not.toHaveProperty('error');
  });

  it('a run the queue did not take is failed, saying why, and does not hold the source', async () => {
    expect(await store.insert(source('s4'), 100)).toBe('ok');
    const refusing: SourceJobs = Object.assign(Object.create(jobs) as SourceJobs, {
      enqueue: async () => {
        throw AppError.unavailable('The queue’s Redis is not answering');
      },
    });
    await expect(useCases(refusing).run(me, { sourceId: 's4' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const [failed] = await store.runs('s4', 10);
    expect(failed).toMatchObject({ state: 'failed', error: 'Not queued: The queue’s Redis is not answering' });
    expect(await store.claimant('s4')).toBeNull();
    await expect(useCases().run(me, { sourceId: 's4' })).resolves.toMatchObject({ runId: expect.any(String) });
  });

  it('keeps a URL’s user name and query secret as it keeps a password: FIND shows neither', async () => {
    const sources = useCases();
    const shown = async (url: string) => {
      const { sourceId } = await sources.create(me, {
        name: `u ${url}`,
        index: 'files',
        kind: 'url',
        connection: { url },
      });
      const {
        sources: [found],
      } = await sources.find(me, { sourceId });
      const kept = await store.get(sourceId);
      return {
        url: found!.connection.url,
        hasSecret: kept!.secret !== undefined,
        clear: JSON.stringify(kept!.connection),
      };
    };
    expect(await shown('https://TOKEN123@files.example.com/a.csv')).toEqual({
      url: 'https://***@files.example.com/a.csv',
      hasSecret: true,
      clear: '{"url":"https://***@files.example.com/a.csv"}',
    });
    expect(await shown('https://files.example.com/a.csv?X-Amz-Signature=abc&X-Amz-Credential=AKIA')).toMatchObject({
      url: 'https://files.example.com/a.csv?***',
      hasSecret: true,
    });
    expect(await shown('https://me:pw@files.example.com/a.csv')).toMatchObject({
      url: 'https://me:***@files.example.com/a.csv',
      hasSecret: true,
    });
    expect(await shown('https://files.example.com/b.csv')).toEqual({
      url: 'https://files.example.com/b.csv',
      hasSecret: false,
      clear: '{"url":"https://files.example.com/b.csv"}',
    });
  });

  it('publishes an append’s cursor with its version: a cursor not saved beside the source costs no duplicate', async () => {
    expect(
      await store.insert({ ...source('s5'), refresh: { timeZone: 'UTC', mode: 'append', cursor: 'id' } }, 100),
    ).toBe('ok');
    const sources = useCases();
    // Redis refuses the cursor's own copy after the publish (or the worker dies right then).
    const forgetful = Object.assign(Object.create(store) as RedisSourceStore, {
      setCursor: async () => {
        throw new Error('Connection is closed.');
      },
    });
    const first = await sources.run(me, { sourceId: 's5' });
    expect(await runner(sources, forgetful).execute({ sourceId: 's5', runId: first.runId })).toBe('done');
    expect(await store.getRun('s5', first.runId)).toMatchObject({ state: 'done', version: 1, cursorMax: '1' });
    expect(await store.cursor('s5')).toBeNull();
    expect(loader.published?.origin).toEqual({
      sourceId: 's5',
      runId: first.runId,
      cursor: { value: '1', of: expect.any(String) },
    });
    const second = await sources.run(me, { sourceId: 's5' });
    await runner(sources).execute({ sourceId: 's5', runId: second.runId });
    // The second read starts past the first run's rows, from the version's own record of them.
    expect(boundsRead).toEqual([undefined, '1']);
    expect(await store.getRun('s5', second.runId)).toMatchObject({ state: 'done', cursorAfter: '1', cursorMax: '2' });
  });

  it('a run taken again after its worker died past the publish is recorded done, not loaded twice', async () => {
    expect(
      await store.insert({ ...source('s6'), refresh: { timeZone: 'UTC', mode: 'append', cursor: 'id' } }, 100),
    ).toBe('ok');
    const sources = useCases();
    const { runId } = await sources.run(me, { sourceId: 's6' });
    // What the dead worker left: its version published (origin: this run), the record still running.
    loader.version = 6;
    loader.published = {
      name: 'orders',
      version: 7,
      recordCount: 2,
      origin: { sourceId: 's6', runId, cursor: { value: '41', of: 'x' } },
    } as IndexEntry;
    await store.putRun({ ...(await store.getRun('s6', runId))!, state: 'running' });
    expect(await runner(sources).execute({ sourceId: 's6', runId })).toBe('done');
    expect(loader.loads).toBe(0);
    expect(await store.getRun('s6', runId)).toMatchObject({ state: 'done', version: 7, cursorMax: '41' });
    expect(await store.claimant('s6')).toBeNull();
  });

  it('updates a source whose key changed without opening its secret, and binds it to its owner’s token', async () => {
    const keyA = new AesSecretBox(Buffer.from('a'.repeat(40)));
    const keyB = new AesSecretBox(Buffer.from('b'.repeat(40)));
    const withBox = (box: AesSecretBox) => new SourcesUseCases(store, jobs, readers, box, NO_INDEX, LIMITS, now);
    const { sourceId } = await withBox(keyA).create(
      { caller: ann, tokenHash: 'h-first' },
      {
        name: 'keyed',
        index: 'keyed',
        kind: 'postgres',
        connection: { host: 'db.example.com', database: 'd', user: 'u', password: 'pw-under-a' },
        table: 'orders',
      },
    );
    // The server's key changed: a name change still goes through, the password kept sealed as it was.
    const renamed = await withBox(keyB).update({ caller: ann, tokenHash: 'h-second' }, { sourceId, name: 'keyed 2' });
    expect(renamed).toMatchObject({ name: 'keyed 2', connection: { hasPassword: true } });
    const sealedUnderA = (await store.get(sourceId))!.secret!;
    expect(() => keyB.open(sealedUnderA)).toThrow(/QUARRY_SOURCE_KEY changed/);
    // The password given again is sealed with the new key.
    await withBox(keyB).update(
      { caller: ann, tokenHash: 'h-second' },
      { sourceId, connection: { host: 'db.example.com', database: 'd', user: 'u', password: 'pw-under-b' } },
    );
    const kept = (await store.get(sourceId))!;
    expect(JSON.parse(keyB.open(kept.secret!))).toEqual({ password: 'pw-under-b' });
    expect(kept.tokenHash).toBe('h-second');
    // An admin's change leaves the runs on the owner's token.
    const admin: Caller = { ...ann, userId: 'u-admin', userName: 'root', admin: true };
    await withBox(keyB).update({ caller: admin, tokenHash: 'h-admin' }, { sourceId, name: 'keyed 3' });
    expect((await store.get(sourceId))!.tokenHash).toBe('h-second');
  });

  it('leaves no cron behind for a source deleted while its update scheduled it', async () => {
    expect(await store.insert(source('s7'), 100)).toBe('ok');
    const sources = useCases();
    // The DELETE of another request lands between the update's write and its schedule.
    const racing: SourceJobs = Object.assign(Object.create(jobs) as SourceJobs, {
      schedule: async (sourceId: string, cron: string, timeZone: string) => {
        await sources.delete(me, { sourceId });
        await jobs.schedule(sourceId, cron, timeZone);
      },
    });
    await useCases(racing).update(me, { sourceId: 's7', refresh: { mode: 'replace', cron: '0 3 * * *' } });
    expect(await store.get('s7')).toBeNull();
    expect(await jobs.nextRun('s7')).toBeNull();
  });

  it('answers 503 (UNAVAILABLE) at once when its Redis is away, never hanging the call', async () => {
    const away = new TestRedis(await freePort());
    await away.start();
    const connection = new IORedis(away.url, { maxRetriesPerRequest: 2 });
    connection.on('error', () => undefined);
    const guarded = unavailableWhenDown(new RedisSourceStore(connection), 'The sources store (Redis)');
    const sources = new SourcesUseCases(
      guarded,
      jobs,
      readers,
      { seal: (t) => t, open: (t) => t },
      NO_INDEX,
      LIMITS,
      now,
    );
    expect((await sources.find(me, {})).sources).toEqual([]);
    await away.stop();
    const err = await sources.find(me, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'UNAVAILABLE',
      detail: 'The sources store (Redis) is not answering right now; try again shortly',
    });
    connection.disconnect();
  });
});

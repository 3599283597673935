import IORedis from 'ioredis';
import { SOURCE_RUNS_KEPT } from '@quarry/contract';
import { freePort } from '@quarry/runtime';
import { TestRedis } from '../../../../tests/support/redis';
import type { SourceRecord, SourceRunRecord } from '../ports/source-store.port';
import { RedisSourceStore } from './redis-source-store.adapter';

const source = (id: string, over: Partial<SourceRecord> = {}): SourceRecord => ({
  id,
  ownerId: 'u1',
  ownerName: 'ann',
  tokenHash: 'h',
  name: `source ${id}`,
  index: 'orders',
  kind: 'postgres',
  connection: { host: 'db', database: 'd', user: 'u' },
  hasPassword: false,
  table: 'orders',
  refresh: { timeZone: 'UTC', mode: 'replace' },
  load: { onError: 'fail' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
});

const run = (sourceId: string, runId: string): SourceRunRecord => ({
  runId,
  sourceId,
  state: 'queued',
  trigger: 'manual',
  mode: 'replace',
  rowsRead: 0,
  loaded: 0,
  rejected: 0,
  queuedAt: '2026-01-01T00:00:00.000Z',
});

describe('RedisSourceStore on a real redis-server', () => {
  let server: TestRedis;
  let redis: IORedis;
  let store: RedisSourceStore;

  beforeAll(async () => {
    server = new TestRedis(await freePort());
    await server.start();
    redis = new IORedis(server.url);
    store = new RedisSourceStore(redis);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  beforeEach(() => redis.flushall());

  it('lets only one of many racing inserts past the owner’s limit, and one of a name', async () => {
    const verdicts = await Promise.all(Array.from({ length: 20 }, (_, i) => store.insert(source(`s${i}`), 5)));
    expect(verdicts.filter((v) => v === 'ok')).toHaveLength(5);
    expect(verdicts.filter((v) => v === 'limit')).toHaveLength(15);
    await redis.flushall();
    const named = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.insert(source(`n${i}`, { name: 'same' }), 50)),
    );
    expect(named.filter((v) => v === 'ok')).toHaveLength(1);
    expect(named.filter((v) => v === 'name-taken')).toHaveLength(9);
    // Another owner may use the name.
    expect(await store.insert(source('other', { name: 'same', ownerId: 'u2' }), 50)).toBe('ok');
    expect((await store.list('u1')).map((s) => s.name)).toEqual(['same']);
    expect((await store.list()).length).toBe(2);
  });

  it('renames keeping names unique, frees the old name, and changes nothing of a removed source', async () => {
    await store.insert(source('a', { name: 'alpha' }), 50);
    await store.insert(source('b', { name: 'beta' }), 50);
    expect(await store.update(source('b', { name: 'alpha' }), 'beta')).toBe('name-taken');
    expect(await store.update(source('a', { name: 'gamma' }), 'alpha')).toBe('ok');
    expect(await store.insert(source('c', { name: 'alpha' }), 50)).toBe('ok');
    expect(await store.remove('a')).toBe(true);
    expect(await store.remove('a')).toBe(false);
    expect(await store.update(source('a', { name: 'gamma' }), 'gamma')).toBe('gone');
    expect(await store.get('a')).toBeNull();
    // Its name is free again.
    expect(await store.insert(source('d', { name: 'gamma' }), 50)).toBe('ok');
  });

  it('claims a source for one run at a time, renews only its own claim, and lets a lapsed claim go', async () => {
    await store.insert(source('a'), 50);
    const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claim('a', `r${i}`, 60_000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    const holder = (await store.claimant('a'))!;
    expect(await store.renew('a', 'not-it', 60_000)).toBe(false);
    expect(await store.renew('a', holder, 60_000)).toBe(true);
    await store.release('a', 'not-it');
    expect(await store.claimant('a')).toBe(holder);
    await store.release('a', holder);
    expect(await store.claim('a', 'short', 50)).toBe(true);
    // A dead worker stops renewing: the claim lapses (Redis's own expiry, waited for by polling it).
    while ((await store.claimant('a')) !== null) await new Promise((r) => setTimeout(r, 10));
    expect(await store.claim('a', 'next', 60_000)).toBe(true);
  });

  it('keeps the newest runs only, writes none for a removed source, and removes a source’s runs and cursor with it', async () => {
    await store.insert(source('a'), 50);
    for (let i = 0; i < SOURCE_RUNS_KEPT + 5; i++) await store.putRun(run('a', `r${String(i).padStart(3, '0')}`));
    const kept = await store.runs('a', 1000);
    expect(kept).toHaveLength(SOURCE_RUNS_KEPT);
    expect(kept[0].runId).toBe(`r${String(SOURCE_RUNS_KEPT + 4).padStart(3, '0')}`);
    expect(await store.getRun('a', 'r000')).toBeNull();
    // Writing a run again replaces it in place.
    await store.putRun({ ...run('a', kept[0].runId), state: 'done' });
    expect((await store.runs('a', 1))[0]).toMatchObject({ runId: kept[0].runId, state: 'done' });
    await store.setCursor('a', { value: '42', of: 'x' });
    expect(await store.remove('a')).toBe(true);
    expect(await store.runs('a', 10)).toEqual([]);
    expect(await store.cursor('a')).toBeNull();
    await store.putRun(run('a', 'late'));
    expect(await store.getRun('a', 'late')).toBeNull();
    expect(await redis.keys('quarry:sources:*')).toEqual(expect.not.arrayContaining([expect.stringContaining(':a')]));
  });
});

import fs from 'node:fs';
import path from 'node:path';
import IORedis from 'ioredis';
import { FlexibleRateLimiter } from '../services/gateway/src/adapters/flexible-rate-limiter.adapter';
import { createIdentity } from './support/identities';
import { rpcClient } from './support/http';
import {
  freePort,
  makeDataDir,
  runCli,
  spawnServe,
  stopProc,
  startQuarry,
  type Proc,
  type RunningQuarry,
} from './support/quarry-process';

/*
 * Rate limits hold across gateway replicas. Two gateway processes of one split deployment share
 * its Redis and data dir; one token's calls spread over both are admitted once, not once per gateway. A
 * third gateway on the same Redis with another QUARRY_RATE_LIMIT_PREFIX (another deployment) counts apart.
 * An embed token revoked through one gateway is refused by the other within its revocation cache.
 */

const RATE = { QUARRY_RATE_LIMIT: '0.5', QUARRY_RATE_BURST: '4' };
// 1 a window of 2 s at 0.5/s, plus the 4 of the burst: what ONE gateway admits at once.
const ADMITTED_AT_ONCE = 5;

let quarry: RunningQuarry;
let second: Proc | undefined;
let secondUrl: string;
let other: Proc | undefined;
let otherUrl: string;
const OTHER_PREFIX = 'staging:rate-limit';
let dataDir: string;
const clients: IORedis[] = [];

beforeAll(async () => {
  dataDir = makeDataDir('quarry-shared-limits-');
  const csv = path.join(dataDir, 'cities.csv');
  fs.writeFileSync(csv, 'city,population\nParis,2100000\nLyon,520000\n');
  const load = await runCli(['index', 'load', 'cities', csv], { QUARRY_DATA_DIR: dataDir });
  if (load.code !== 0) throw new Error(load.stderr);
  quarry = await startQuarry({ topology: 'split', dataDir, env: RATE });
  const gateway = async (env: Record<string, string> = {}) => {
    const started = await spawnServe({
      QUARRY_DATA_DIR: dataDir,
      QUARRY_OPS_PORT: '0',
      ...RATE,
      ...quarry.wiring,
      QUARRY_TARGET: 'gateway',
      ...env,
    });
    if (!started.port) throw new Error('gateway reported no port');
    return { proc: started.proc, url: `http://127.0.0.1:${started.port}` };
  };
  [{ proc: second, url: secondUrl }, { proc: other, url: otherUrl }] = await Promise.all([
    gateway(),
    gateway({ QUARRY_RATE_LIMIT_PREFIX: OTHER_PREFIX }),
  ]);
  // A hang guard: eight processes started in three rounds on 2 loaded cores.
}, 300_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const p of [second, other]) if (p) await stopProc(p);
  await quarry?.stop();
});

const redis = (url: string) => {
  const c = new IORedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
  c.on('error', () => undefined);
  clients.push(c);
  return c;
};

describe('rate limits shared by two gateways through Redis', () => {
  it('admits one limit for a token across both gateways, refuses the rest with 429 and Retry-After, and leaves another token alone', async () => {
    const racer = await createIdentity(dataDir, 'racer');
    const bystander = await createIdentity(dataDir, 'bystander');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        rpcClient(i % 2 ? secondUrl : quarry.baseUrl, racer.token).call('INDEXES.FIND', {}, { id: i }),
      ),
    );
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    // Twice ADMITTED_AT_ONCE is what per-process counters would have let through.
    expect({ ok: ok.length, limited: limited.length }).toEqual({
      ok: ADMITTED_AT_ONCE,
      limited: 40 - ADMITTED_AT_ONCE,
    });
    for (const r of limited) {
      expect(r.json).toMatchObject({ status: 429, title: 'Too Many Requests' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Both gateways refuse once the shared allowance is spent, and admit another token.
    expect((await rpcClient(secondUrl, racer.token).call('INDEXES.FIND', {})).status).toBe(429);
    expect((await rpcClient(quarry.baseUrl, racer.token).call('INDEXES.FIND', {})).status).toBe(429);
    expect((await rpcClient(secondUrl, bystander.token).call('INDEXES.FIND', {})).status).toBe(200);
    expect((await rpcClient(quarry.baseUrl, bystander.token).call('INDEXES.FIND', {})).status).toBe(200);

    // Another deployment on the same Redis (its own QUARRY_RATE_LIMIT_PREFIX) has a whole allowance of its own
    // for the same token: sharing this deployment's spent counters would admit none of these at once.
    const elsewhere = await Promise.all(
      Array.from({ length: 10 }, (_, i) => rpcClient(otherUrl, racer.token).call('INDEXES.FIND', {}, { id: i })),
    );
    expect(elsewhere.filter((r) => r.status === 200)).toHaveLength(ADMITTED_AT_ONCE);
    expect(elsewhere.filter((r) => r.status === 429)).toHaveLength(10 - ADMITTED_AT_ONCE);
    const keys = redis(quarry.wiring!.REDIS_URL);
    await keys.connect();
    expect(await keys.keys(`${OTHER_PREFIX}:*`)).not.toHaveLength(0);
    expect(await keys.keys('quarry:rate-limit:*')).not.toHaveLength(0);
  });
});

describe('an embed token revoked through one gateway', () => {
  it('is refused there at once, and by the other replica within its 2 s revocation cache', async () => {
    const issuer = await createIdentity(dataDir, 'revoking-issuer');
    const issued = (await rpcClient(quarry.baseUrl, issuer.token).call('TOKENS.EMBED', {
      index: 'cities',
      ttlSeconds: 600,
    })) as { json: { result: { data: { token: string; id: string } } } };
    const { token, id } = issued.json.result.data;
    const search = (url: string) => rpcClient(url, token).call('QUERIES.EXECUTE', { index: 'cities', pageSize: 1 });
    // Seen (and cached as not revoked) by the other replica first.
    expect((await search(secondUrl)).status).toBe(200);
    const revoked = await rpcClient(quarry.baseUrl, issuer.token).call('TOKENS.REVOKE_EMBED', { id });
    expect(revoked.status).toBe(200);
    const at = Date.now();
    expect((await search(quarry.baseUrl)).status).toBe(401);
    // Until then the replica answers 200 (or 429: this suite's rate limit), never anything else. Its cache
    // entry was filled before the revoke, so every call sent 2 s after it is refused: judged by when each
    // admitted call was sent, not by how long calls take to answer on a loaded machine.
    let lastAdmittedSentMs = -1;
    let sent = Date.now() - at;
    let last = await search(secondUrl);
    while (last.status !== 401 && sent < 30_000) {
      expect([200, 429]).toContain(last.status);
      if (last.status === 200) lastAdmittedSentMs = sent;
      await new Promise((r) => setTimeout(r, 100));
      sent = Date.now() - at;
      last = await search(secondUrl);
    }
    expect(last.json).toMatchObject({ status: 401, detail: 'Token revoked' });
    expect(lastAdmittedSentMs).toBeLessThan(2000);
  });
});

describe('FlexibleRateLimiter against a real Redis', () => {
  it('counts two instances (two replicas) against one allowance per key, apart per key and per prefix', async () => {
    const url = quarry.wiring!.REDIS_URL;
    const a = redis(url);
    const b = redis(url);
    await Promise.all([a.connect(), b.connect()]);
    const one = new FlexibleRateLimiter(0.5, 2, { redis: a, keyPrefix: 'test:one' });
    const two = new FlexibleRateLimiter(0.5, 2, { redis: b, keyPrefix: 'test:one' });
    const taken = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).take('k')));
    expect(taken.filter((t) => t.ok)).toHaveLength(3);
    const refused = taken.find((t) => !t.ok);
    expect(refused).toMatchObject({ ok: false, retryAfterSeconds: expect.any(Number) as number });
    expect((await one.take('other')).ok).toBe(true);
    // Another deployment's prefix on the same Redis has its own counters.
    expect((await new FlexibleRateLimiter(0.5, 2, { redis: a, keyPrefix: 'test:two' }).take('k')).ok).toBe(true);
    expect(await a.keys('test:one:*')).not.toHaveLength(0);
  });

  it('falls back to its in-memory insurance limiter, same limits, while Redis cannot be reached', async () => {
    const down = redis(`redis://127.0.0.1:${await freePort()}`);
    const limiter = new FlexibleRateLimiter(0.5, 2, { redis: down, keyPrefix: 'test:down' });
    const taken = await Promise.all(Array.from({ length: 6 }, () => limiter.take('k')));
    expect(taken.filter((t) => t.ok)).toHaveLength(3);
    expect(taken.filter((t) => !t.ok)).toHaveLength(3);
  });
});

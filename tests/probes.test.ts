import fs from 'node:fs';
import path from 'node:path';
import { channelCredentials, grpc, LIVENESS_SERVICE } from '@quarry/rpc';
import { healthClient, healthStatus, makeTlsFixtures, tlsTarget, type HealthClient } from '@quarry/testkit';
import {
  freePort,
  makeDataDir,
  readOnlyForPod,
  spawnServe,
  stopProc,
  writableForPod,
  type Proc,
} from './support/quarry-process';
import { TestRedis } from './support/redis';

/*
 * On a real `quarry serve` process (the chart service, whose store is Redis)
 * with mTLS between processes on: the probes Kubernetes and compose use need no client certificate, a
 * Redis outage takes the process out of service (readiness) without asking for a restart (liveness),
 * and it comes back by itself.
 */
const grpcCheck = healthStatus;

/** Reads until `want` comes or `ms` pass (a hang guard: health is refreshed every 2 s, later when loaded). */
async function eventually<T>(read: () => Promise<T>, want: T, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let got = await read();
  while (got !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    got = await read();
  }
  return got;
}

describe('probes of a service with mTLS on', () => {
  const dataDir = makeDataDir('quarry-probes-');
  const tlsDir = fs.mkdtempSync(path.join(dataDir, 'tls-'));
  const files = makeTlsFixtures(tlsDir);
  const read = (f: string) => fs.readFileSync(f, 'utf8');
  let redis: TestRedis;
  let proc: Proc;
  let opsUrl: string;
  let chartAddr: string;
  const clients: HealthClient[] = [];
  const connect = (creds: grpc.ChannelCredentials) => {
    const c = healthClient(tlsTarget(chartAddr), creds);
    clients.push(c);
    return c;
  };
  const status = async (route: '/healthz' | '/readyz') => (await fetch(`${opsUrl}${route}`)).status;

  beforeAll(async () => {
    redis = new TestRedis(await freePort());
    await redis.start();
    const opsPort = await freePort();
    chartAddr = `127.0.0.1:${await freePort()}`;
    opsUrl = `http://127.0.0.1:${opsPort}`;
    ({ proc } = await spawnServe({
      QUARRY_TARGET: 'chart',
      QUARRY_DATA_DIR: dataDir,
      QUARRY_CHART_ADDR: chartAddr,
      QUARRY_OPS_PORT: String(opsPort),
      REDIS_URL: redis.url,
      QUARRY_GRPC_TLS_CERT: files.cert,
      QUARRY_GRPC_TLS_KEY: files.key,
      QUARRY_GRPC_TLS_CA: files.ca,
    }));
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    if (proc) await stopProc(proc);
    await redis?.stop();
  });

  it('answers the HTTP probes without any certificate, while its gRPC port refuses a peer without one', async () => {
    expect(await status('/healthz')).toBe(200);
    // Ready once the first store check has answered (on a loaded machine, a moment after it listens).
    const until = Date.now() + 30_000;
    while ((await status('/readyz')) !== 200 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await status('/readyz')).toBe(200);
    // What a kubelet gRPC probe is: no client certificate. The handshake refuses it, so probes cannot use it.
    const noCert = connect(grpc.credentials.createSsl(Buffer.from(read(files.ca))));
    await expect(grpcCheck(noCert, LIVENESS_SERVICE)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    const peer = connect(channelCredentials({ ca: read(files.ca), cert: read(files.cert), key: read(files.key) }));
    expect(await grpcCheck(peer, LIVENESS_SERVICE)).toBe('SERVING');
    // Readiness is refreshed every 2 s: the first check may predate the Redis connection.
    expect(await eventually(() => grpcCheck(peer, 'quarry.v1.ChartService'), 'SERVING')).toBe('SERVING');
  }, 120_000);

  it('is not ready while Redis is stopped, yet stays live, and is ready again once Redis is back', async () => {
    const peer = connect(channelCredentials({ ca: read(files.ca), cert: read(files.cert), key: read(files.key) }));
    await redis.stop();
    expect(await eventually(() => status('/readyz'), 503)).toBe(503);
    expect(await status('/healthz')).toBe(200);
    expect(await eventually(() => grpcCheck(peer, 'quarry.v1.ChartService'), 'NOT_SERVING')).toBe('NOT_SERVING');
    expect(await grpcCheck(peer, LIVENESS_SERVICE)).toBe('SERVING');
    // Nothing restarted it: the same process serves again once its store is back.
    const pid = proc.child.pid;
    await redis.start();
    expect(await eventually(() => status('/readyz'), 200, 60_000)).toBe(200);
    expect(await eventually(() => grpcCheck(peer, 'quarry.v1.ChartService'), 'SERVING')).toBe('SERVING');
    expect(proc.child.pid).toBe(pid);
    expect(proc.child.exitCode).toBeNull();
  }, 240_000);
});

/*
 * The gateway and a chart worker as the Deployments run them: a non-root process whose data directory
 * is read-only, with REDIS_URL set. They start and answer their probes whether or not Redis answers,
 * and /readyz names the store that is away.
 */
describe('a gateway and a chart worker on a read-only data directory', () => {
  const dataDir = makeDataDir('quarry-readonly-');
  // The embedded metadata store stands in for MongoDB: its file lives on a writable path of its own.
  const storeDir = writableForPod('quarry-readonly-store-');
  fs.symlinkSync(path.join(storeDir, 'quarry.db'), path.join(dataDir, 'quarry.db'));
  const asPod = readOnlyForPod(dataDir);
  const podTmp = writableForPod('quarry-readonly-tmp-');
  let redis: TestRedis;
  const procs: Proc[] = [];

  const start = async (target: 'gateway' | 'chart-worker', redisUrl: string) => {
    const opsPort = await freePort();
    const { proc } = await spawnServe(
      {
        QUARRY_TARGET: target,
        QUARRY_DATA_DIR: dataDir,
        QUARRY_OPS_PORT: String(opsPort),
        REDIS_URL: redisUrl,
        QUARRY_EMBED_SECRET: 'an-embed-secret-of-at-least-32-characters',
        QUARRY_QUERY_ADDR: '127.0.0.1:1',
        QUARRY_CROSSTAB_ADDR: '127.0.0.1:2',
        QUARRY_CHART_ADDR: '127.0.0.1:3',
        QUARRY_REPORTS_ADDR: '127.0.0.1:4',
        QUARRY_CHROMIUM_IDLE_S: '0',
        TMPDIR: podTmp,
        HOME: podTmp,
      },
      asPod,
    );
    procs.push(proc);
    return async (route: '/healthz' | '/readyz') => {
      const res = await fetch(`http://127.0.0.1:${opsPort}${route}`);
      return {
        status: res.status,
        body: (await res.json()) as { status: string; detail?: string; degraded?: string[] },
      };
    };
  };

  beforeAll(async () => {
    redis = new TestRedis(await freePort());
    await redis.start();
  });

  afterAll(async () => {
    await Promise.all(procs.map((p) => stopProc(p)));
    await redis?.stop();
  });

  it('starts the gateway with REDIS_URL and serves, webhooks off without QUARRY_WEBHOOK_KEY', async () => {
    const probe = await start('gateway', redis.url);
    expect((await probe('/healthz')).status).toBe(200);
    expect(await eventually(async () => (await probe('/readyz')).body.degraded, undefined)).toBeUndefined();
    expect((await probe('/readyz')).status).toBe(200);
    expect(procs[procs.length - 1].lines.join('\n')).toContain('QUARRY_WEBHOOK_KEY is not set');
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 120_000);

  it('starts the all-in-one server with REDIS_URL unreachable: live at once, not ready, naming Redis', async () => {
    const opsPort = await freePort();
    const { proc, port } = await spawnServe({
      QUARRY_TARGET: 'all',
      QUARRY_DATA_DIR: makeDataDir('quarry-all-no-redis-'),
      QUARRY_OPS_PORT: String(opsPort),
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    });
    procs.push(proc);
    expect((await fetch(`http://127.0.0.1:${opsPort}/healthz`)).status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
    expect(ready.status).toBe(503);
    const ops = (await ready.json()) as { waitingFor: string; detail: string };
    expect(ops.detail).toMatch(/Redis/);
    expect(ops.waitingFor).toBe('the chart module');
    // The API port names what it waits for too, never the cause (which may name hosts).
    const api = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(api.status).toBe(503);
    expect(await api.json()).toEqual({ status: 'not ready', waitingFor: 'the chart module' });
  }, 120_000);

  it('starts both with Redis unreachable, names it in /readyz, and serves once it is back', async () => {
    const port = await freePort();
    const later = new TestRedis(port);
    const gateway = await start('gateway', later.url);
    const worker = await start('chart-worker', later.url);
    try {
      expect((await gateway('/healthz')).status).toBe(200);
      expect((await worker('/healthz')).status).toBe(200);
      // The gateway serves what needs no Redis: ready, and says what it lacks.
      const g = await gateway('/readyz');
      expect(g.status).toBe(200);
      expect(g.body.degraded?.join(' ')).toMatch(/Redis \(schedules\) is unreachable/);
      // A chart worker can do nothing without its queue: not ready, and says why.
      const w = await worker('/readyz');
      expect(w.status).toBe(503);
      expect(w.body.detail).toMatch(/Redis \(chart queue\) is unreachable/);
      await later.start();
      // Hang guards: the clients reconnect with a growing backoff, slower on a loaded machine.
      expect(await eventually(async () => (await worker('/readyz')).status, 200, 60_000)).toBe(200);
      expect(await eventually(async () => (await gateway('/readyz')).body.degraded, undefined, 60_000)).toBeUndefined();
    } finally {
      await later.stop();
    }
  }, 300_000);
});

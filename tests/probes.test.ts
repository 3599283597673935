import fs from 'node:fs';
import path from 'node:path';
import { channelCredentials, grpc, LIVENESS_SERVICE } from '@quarry/rpc';
import { healthClient, healthStatus, makeTlsFixtures, type HealthClient } from '@quarry/testkit';
import { freePort, makeDataDir, spawnServe, stopProc, type Proc } from './support/quarry-process';
import { TestRedis } from './support/redis';

/*
 * Issue #28 items 1 and 9, on a real `quarry serve` process (the chart service, whose store is Redis)
 * with mTLS between processes on: the probes Kubernetes and compose use need no client certificate, a
 * Redis outage takes the process out of service (readiness) without asking for a restart (liveness),
 * and it comes back by itself.
 */
const grpcCheck = healthStatus;

async function eventually<T>(read: () => Promise<T>, want: T, ms = 15000): Promise<T> {
  const deadline = Date.now() + ms;
  let got = await read();
  while (got !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    got = await read();
  }
  return got;
}

describe('probes of a service with mTLS on (issue #28 items 1 and 9)', () => {
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
    const c = healthClient(chartAddr, creds);
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
  }, 30000);

  afterAll(async () => {
    for (const c of clients) c.close();
    if (proc) await stopProc(proc);
    await redis?.stop();
  });

  it('answers the HTTP probes without any certificate, while its gRPC port refuses a peer without one', async () => {
    expect(await status('/healthz')).toBe(200);
    // Ready once the first store check has answered (on a loaded machine, a moment after it listens).
    const until = Date.now() + 10_000;
    while ((await status('/readyz')) !== 200 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(await status('/readyz')).toBe(200);
    // What a kubelet gRPC probe is: no client certificate. The handshake refuses it, so probes cannot use it.
    const noCert = connect(grpc.credentials.createSsl(Buffer.from(read(files.ca))));
    await expect(grpcCheck(noCert, LIVENESS_SERVICE)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    const peer = connect(channelCredentials({ ca: read(files.ca), cert: read(files.cert), key: read(files.key) }));
    expect(await grpcCheck(peer, LIVENESS_SERVICE)).toBe('SERVING');
    // Readiness is refreshed every 2 s: the first check may predate the Redis connection.
    expect(await eventually(() => grpcCheck(peer, 'quarry.v1.ChartService'), 'SERVING')).toBe('SERVING');
  }, 20000);

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
    expect(await eventually(() => status('/readyz'), 200, 30000)).toBe(200);
    expect(await eventually(() => grpcCheck(peer, 'quarry.v1.ChartService'), 'SERVING')).toBe('SERVING');
    expect(proc.child.pid).toBe(pid);
    expect(proc.child.exitCode).toBeNull();
  }, 60000);
});

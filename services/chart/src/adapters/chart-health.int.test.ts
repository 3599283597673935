import { spawn } from 'node:child_process';
import net from 'node:net';
import { silentLogger } from '@quarry/logger';
import { LIVENESS_SERVICE } from '@quarry/rpc';
import { healthClient, healthStatus } from '@quarry/testkit';
import { createChartModule } from '../module';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

describe('grpc.health.v1 on the chart service', () => {
  // Readiness follows Redis, liveness (what a liveness probe asks) does not.
  it('is NOT_SERVING while Redis is stopped and SERVING once it runs, and live all along', async () => {
    const port = await freePort();
    const module = createChartModule(
      {
        listenAddr: '127.0.0.1:0',
        graceMs: 1000,
        redisUrl: `redis://127.0.0.1:${port}`,
        waitTimeoutMs: 5000,
        maxWaiting: 10,
        perCaller: 2,
      },
      silentLogger(),
    );
    // Probes carry no credential: health answers them all the same.
    await module.start({ internalToken: 'k'.repeat(32), tls: undefined });
    const client = healthClient(module.address);
    const check = (service = 'quarry.v1.ChartService') => healthStatus(client, service);
    const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    // A hang guard: Redis starting, the client reconnecting and the next health refresh, on a loaded machine.
    const until = async (want: string) => {
      let status = await check();
      const deadline = Date.now() + 30_000;
      while (status !== want && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        status = await check();
      }
      return status;
    };
    let stopped: Promise<unknown> | undefined;
    try {
      expect(await check()).toBe('NOT_SERVING');
      expect(await check(LIVENESS_SERVICE)).toBe('SERVING');
      expect(await until('SERVING')).toBe('SERVING');
      expect(await check('')).toBe('SERVING');
      // Redis goes away: the service cannot serve, but the process works and must not be restarted.
      stopped = new Promise((r) => redis.once('exit', r));
      redis.kill('SIGKILL');
      await stopped;
      expect(await until('NOT_SERVING')).toBe('NOT_SERVING');
      expect(await check('')).toBe('NOT_SERVING');
      expect(await check(LIVENESS_SERVICE)).toBe('SERVING');
    } finally {
      if (!stopped) redis.kill('SIGKILL');
      client.close();
      await module.stop();
    }
  }, 120_000);
});

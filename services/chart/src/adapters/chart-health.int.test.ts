import { spawn } from 'node:child_process';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';
import { silentLogger } from '@quarry/logger';
import { createChartModule } from '../module';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

type HealthClient = grpc.Client & {
  check(req: { service: string }, cb: (e: grpc.ServiceError | null, r?: { status: string }) => void): void;
};

describe('grpc.health.v1 on the chart service', () => {
  it('is NOT_SERVING while Redis is stopped and SERVING once it runs', async () => {
    const port = await freePort();
    const module = createChartModule(
      {
        listenAddr: '127.0.0.1:0',
        graceMs: 1000,
        redisUrl: `redis://127.0.0.1:${port}`,
        waitTimeoutMs: 5000,
        maxWaiting: 10,
      },
      silentLogger(),
    );
    // Probes carry no credential: health answers them all the same.
    await module.start({ internalToken: 'k'.repeat(32), tls: undefined });
    const def = protoLoader.loadSync(protoPath, { keepCase: true, enums: String, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } };
    };
    const client = new pkg.grpc.health.v1.Health(module.address, grpc.credentials.createInsecure());
    const check = () =>
      new Promise<string>((res, rej) =>
        client.check({ service: 'quarry.v1.ChartService' }, (e, r) => (e ? rej(e) : res(r!.status))),
      );
    const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    try {
      expect(await check()).toBe('NOT_SERVING');
      let status = 'NOT_SERVING';
      const until = Date.now() + 10000;
      while (status !== 'SERVING' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        status = await check();
      }
      expect(status).toBe('SERVING');
    } finally {
      redis.kill('SIGKILL');
      client.close();
      await module.stop();
    }
  }, 30000);
});

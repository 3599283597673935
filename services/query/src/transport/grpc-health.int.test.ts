import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';
import { silentLogger } from '@quarry/logger';
import { LIVENESS_SERVICE } from '@quarry/rpc';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { HeavyCallLimiter } from '@quarry/runtime';
import { SnapshotEngine } from '@quarry/snapshots';
import { LruResultCache } from '@quarry/result-cache';
import { createQueryModule } from '../module';

type HealthClient = grpc.Client & {
  check(req: { service: string }, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void): void;
};

function healthClient(addr: string): HealthClient {
  const def = protoLoader.loadSync(protoPath, { keepCase: true, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } };
  };
  return new pkg.grpc.health.v1.Health(addr, grpc.credentials.createInsecure());
}

const check = (c: HealthClient, service: string) =>
  new Promise<string>((resolve, reject) =>
    c.check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
  );

describe('grpc.health.v1 on a service', () => {
  it('is SERVING while its store answers and NOT_SERVING once it does not', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-health-'));
    const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
    const engine = new SnapshotEngine(dir);
    let storeUp = true;
    const module = createQueryModule(
      {
        listenAddr: '127.0.0.1:0',
        graceMs: 1000,
        dataDir: dir,
        cursorSecret: 'x'.repeat(32),
        searchBackend: 'embedded',
        typesense: undefined,
        memoryIndexBytes: 0,
      },
      silentLogger(),
      {
        catalog: store,
        engine,
        limiter: new HeavyCallLimiter({ maxRunning: 2, perCaller: 2, maxQueued: 2 }),
        cache: new LruResultCache(0),
        ping: async () => {
          if (!storeUp) throw new Error('store down');
          await store.ping();
        },
      },
    );
    // Probes carry no credential: health answers them all the same.
    await module.start({ internalToken: 'k'.repeat(32), tls: undefined });
    const client = healthClient(module.address);
    try {
      expect(await check(client, '')).toBe('SERVING');
      expect(await check(client, 'quarry.v1.QueryService')).toBe('SERVING');
      storeUp = false;
      await new Promise((r) => setTimeout(r, 2500));
      expect(await check(client, '')).toBe('NOT_SERVING');
      // Issue #28 item 1: the process still works; a liveness probe must not restart it.
      expect(await check(client, LIVENESS_SERVICE)).toBe('SERVING');
      storeUp = true;
      await new Promise((r) => setTimeout(r, 2500));
      expect(await check(client, 'quarry.v1.QueryService')).toBe('SERVING');
    } finally {
      client.close();
      await module.stop();
      await engine.close();
      await store.close();
    }
  }, 20000);
});

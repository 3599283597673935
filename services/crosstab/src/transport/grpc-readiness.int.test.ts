import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';
import { silentLogger } from '@quarry/logger';
import type { IndexEntry } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { LruResultCache } from '@quarry/result-cache';
import { HeavyCallLimiter } from '@quarry/runtime';
import { buildSnapshot, SnapshotEngine } from '@quarry/snapshots';
import { createCrosstabModule } from '../module';

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

const check = (c: HealthClient) =>
  new Promise<string>((resolve, reject) =>
    c.check({ service: 'quarry.v1.CrosstabService' }, (err, res) => (err ? reject(err) : resolve(res!.status))),
  );

/**
 * Issue #30 item 2: a crosstab process is ready (gRPC health, and /readyz, which asks the same
 * readiness) only once the indexes it serves are open, so a rolling update never routes a first
 * crosstab to a process still opening them. Opening is held here at the catalog's listing.
 */
describe('crosstab readiness waits for the published indexes to be open', () => {
  it('is NOT_SERVING while they open and SERVING once every one is open', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-warm-'));
    const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
    const engine = new SnapshotEngine(dir);
    const file = path.join(dir, 'towns.json');
    fs.writeFileSync(file, JSON.stringify([{ town: 'Oslo' }, { town: 'Rome' }]));
    for (const [name, attach] of [
      ['large', true],
      ['small', false],
    ] as const) {
      const built = await buildSnapshot({
        name,
        file,
        dataDir: dir,
        types: {},
        views: [],
        attachMinRecords: attach ? 0 : Infinity,
      });
      await store.publishIndex({ name, description: '', views: [], ...built });
    }
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const catalog = Object.assign(Object.create(store) as SqliteMetadataStore, {
      listIndexes: async (): Promise<IndexEntry[]> => {
        await gate;
        return store.listIndexes();
      },
    });
    const module = createCrosstabModule({ listenAddr: '127.0.0.1:0', graceMs: 1000, tableThreads: 0 }, silentLogger(), {
      catalog,
      engine,
      ping: () => store.ping(),
      limiter: new HeavyCallLimiter({ maxRunning: 2, perCaller: 2, maxQueued: 2 }),
      cache: new LruResultCache(0),
    });
    await module.start({ internalToken: 'k'.repeat(32), tls: undefined });
    const client = healthClient(module.address);
    try {
      expect(await check(client)).toBe('NOT_SERVING');
      await expect(module.ready()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      expect(await engine.opened()).toEqual([]);
      open();
      // The next health refresh (every 2 s) finds them open.
      await new Promise((r) => setTimeout(r, 2500));
      expect(await check(client)).toBe('SERVING');
      await module.ready();
      expect((await engine.opened()).sort()).toEqual(['large@1 (attached)', 'small@1 (memory)']);
    } finally {
      client.close();
      await module.stop();
      await engine.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 20000);
});

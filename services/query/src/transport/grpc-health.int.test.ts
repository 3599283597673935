import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '@quarry/logger';
import { LIVENESS_SERVICE } from '@quarry/rpc';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { HeavyCallLimiter } from '@quarry/runtime';
import { SnapshotEngine } from '@quarry/snapshots';
import { healthClient, healthStatus, observeWarming, settled, WARM_BEFORE_READY } from '@quarry/testkit';
import { LruResultCache } from '@quarry/result-cache';
import { createQueryModule } from '../module';

const check = healthStatus;

/** A query process on the embedded engine over `dir`, on a free loopback port. */
const embeddedConfig = (dir: string) => ({
  listenAddr: '127.0.0.1:0',
  graceMs: 1000,
  dataDir: dir,
  cursorSecret: 'x'.repeat(32),
  searchBackend: 'embedded' as const,
  typesense: undefined,
  memoryIndexBytes: 0,
  exportDir: '/nonexistent/exports',
  exportMemoryBytes: 64 * 1024 * 1024,
  duckdbTempDir: undefined,
  duckdbTempMaxBytes: undefined,
});

describe('grpc.health.v1 on a service', () => {
  it('is SERVING while its store answers and NOT_SERVING once it does not', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-health-'));
    const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
    const engine = new SnapshotEngine(dir);
    let storeUp = true;
    const module = createQueryModule(embeddedConfig(dir), silentLogger(), {
      catalog: store,
      engine,
      limiter: new HeavyCallLimiter({ maxRunning: 2, perCaller: 2, maxQueued: 2 }),
      cache: new LruResultCache(0),
      ping: async () => {
        if (!storeUp) throw new Error('store down');
        await store.ping();
      },
    });
    // Probes carry no credential: health answers them all the same.
    await module.start({ internalToken: 'k'.repeat(32), tls: undefined });
    const client = healthClient(module.address);
    try {
      expect(await check(client, '')).toBe('SERVING');
      expect(await check(client, 'quarry.v1.QueryService')).toBe('SERVING');
      // Health is refreshed every 2 s: wait for the refresh that reports the change (up to 15 s) rather
      // than a pause of 2.5 s, which a loaded machine can outlast.
      storeUp = false;
      expect(await settled(() => check(client, ''), 'NOT_SERVING', 15_000)).toBe('NOT_SERVING');
      // The process still works; a liveness probe must not restart it.
      expect(await check(client, LIVENESS_SERVICE)).toBe('SERVING');
      storeUp = true;
      expect(await settled(() => check(client, 'quarry.v1.QueryService'), 'SERVING', 15_000)).toBe('SERVING');
    } finally {
      client.close();
      await module.stop();
      await engine.close();
      await store.close();
    }
  }, 60000);

  // On the embedded engine searches run on the snapshots, so a
  // query pod is ready only once every published version is open. Opening is held at the catalog's listing.
  it('is NOT_SERVING while the published indexes open and SERVING once every one is open', async () => {
    const seen = await observeWarming('quarry.v1.QueryService', LIVENESS_SERVICE, (deps, dir) =>
      createQueryModule(embeddedConfig(dir), silentLogger(), deps),
    );
    expect(seen).toEqual(WARM_BEFORE_READY);
  }, 60000);
});

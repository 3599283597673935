import fs from 'node:fs';
import os from 'node:os';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath } from 'grpc-health-check';
import path from 'node:path';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { LruResultCache, type ResultCache } from '@quarry/result-cache';
import type { GrpcServiceModule } from '@quarry/rpc';
import { HeavyCallLimiter } from '@quarry/runtime';
import { buildSnapshot, SnapshotEngine } from '@quarry/snapshots';
import { settled } from './timing';

export type HealthClient = grpc.Client & {
  check(req: { service: string }, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void): void;
};

/** A grpc.health.v1 client of `addr` (insecure unless credentials are given). */
export function healthClient(addr: string, creds = grpc.credentials.createInsecure()): HealthClient {
  const def = protoLoader.loadSync(protoPath, { keepCase: true, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } };
  };
  return new pkg.grpc.health.v1.Health(addr, creds);
}

/** The health status `c` reports for `service` ('' for the whole process). */
export const healthStatus = (c: HealthClient, service: string) =>
  new Promise<string>((resolve, reject) =>
    c.check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))),
  );

/**
 * For readiness tests: a store in `dir` with two published indexes, "large" attached
 * from its DuckDB file and "small" read into memory, and a view of it whose listing waits for `open()`,
 * so a process started on it is still opening its indexes until the test says.
 */
async function gatedCatalog(
  dir: string,
): Promise<{ store: SqliteMetadataStore; catalog: SqliteMetadataStore; open: () => void }> {
  const store = new SqliteMetadataStore(path.join(dir, 'quarry.db'));
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
  return { store, catalog, open };
}

/** What a service serving snapshots is given: the held catalog, its engine, and small limits. */
function warmingDeps(catalog: IndexCatalog, engine: SnapshotEngine, ping: () => Promise<void>) {
  const limiter = new HeavyCallLimiter({ maxRunning: 2, perCaller: 2, maxQueued: 2 });
  const cache: ResultCache = new LruResultCache(0);
  return { catalog, engine, ping, limiter, cache };
}
export type WarmingDeps = ReturnType<typeof warmingDeps>;

export interface WarmingSeen {
  /** While the catalog's listing is held: health, readiness and what is open. */
  opening: { health: string; liveness: string; ready: string; opened: string[] };
  /** After the listing is released, once a health refresh (every 2 s) reports SERVING, or 15 s. */
  opened: { health: string; ready: string; opened: string[] };
}

/**
 * What every service serving snapshots must show: not serving (but live) while it opens them, ready once
 * every published version is open, the large one attached and the small one read into memory.
 */
export const WARM_BEFORE_READY: WarmingSeen = {
  opening: { health: 'NOT_SERVING', liveness: 'SERVING', ready: 'UNAVAILABLE', opened: [] },
  opened: { health: 'SERVING', ready: 'ready', opened: ['large@1 (attached)', 'small@1 (memory)'] },
};

/**
 * Starts the module `create` makes over a catalog
 * of two indexes (one attached, one in memory) whose listing is held, and reports what its health and
 * readiness say while the indexes open and once they are open. The test asserts on what is seen.
 */
export async function observeWarming(
  serviceName: string,
  livenessName: string,
  create: (deps: WarmingDeps, dataDir: string) => GrpcServiceModule,
): Promise<WarmingSeen> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-warm-'));
  const { store, catalog, open } = await gatedCatalog(dir);
  const engine = new SnapshotEngine(dir);
  const module = create(
    warmingDeps(catalog, engine, () => store.ping()),
    dir,
  );
  await module.start({ internalToken: 'k'.repeat(32), tls: undefined });
  const client = healthClient(module.address);
  const ready = () =>
    module.ready().then(
      () => 'ready',
      (err: { code?: string }) => String(err.code),
    );
  try {
    const opening = {
      health: await healthStatus(client, serviceName),
      liveness: await healthStatus(client, livenessName),
      ready: await ready(),
      opened: await engine.opened(),
    };
    open();
    // Health is refreshed every 2 s: wait for the refresh that reports it (up to 15 s) rather than a pause
    // of 2.5 s, which a loaded machine can outlast.
    const opened = {
      health: await settled(() => healthStatus(client, serviceName), 'SERVING', 15_000),
      ready: await ready(),
      opened: (await engine.opened()).sort(),
    };
    return { opening, opened };
  } finally {
    client.close();
    await module.stop();
    await engine.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

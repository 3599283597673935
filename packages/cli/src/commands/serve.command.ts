import { createServer } from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Config, ServiceName, Target } from '@quarry/config';
import { ChartWorkerModule, chartServiceConfig, createChartModule, startPrivateRedis, type PrivateRedis } from '@quarry/chart';
import { createCrosstabModule, crosstabServiceConfig } from '@quarry/crosstab';
import { GatewayModule, gatewayConfig } from '@quarry/gateway';
import type { Logger } from '@quarry/logger';
import { instrumentStore, mergedMetrics, QuarryMetrics, type MetricsSnapshot } from '@quarry/metrics';
import { openMetadataStore, type MetadataAndCatalog } from '@quarry/metadata-store';
import { createQueryModule, queryServiceConfig } from '@quarry/query';
import { LruResultCache } from '@quarry/result-cache';
import { createReportsModule, reportsServiceConfig } from '@quarry/reports';
import { HeavyCallLimiter, type GrpcServiceModule, type QuarryModule } from '@quarry/rpc';
import { SnapshotEngine } from '@quarry/snapshots';

export interface RunningProcess {
  /** The gateway's HTTP port when this process runs the gateway. */
  port: number | undefined;
  stop(): Promise<void>;
}

export interface RunningServices {
  hosted: Partial<Record<ServiceName, string>>;
  /** Rejects while a module's store is unreachable. */
  ready(): Promise<void>;
  /** This set of modules' metrics (their thread's registry). */
  metrics(): Promise<MetricsSnapshot>;
  stop(): Promise<void>;
}

const SERVICE_TARGETS: ServiceName[] = ['query', 'crosstab', 'chart', 'reports'];

async function stopAll(modules: QuarryModule[], log: Logger): Promise<void> {
  for (const m of [...modules].reverse()) {
    try {
      await m.stop();
    } catch (err) {
      log.error({ err, module: m.name }, 'module did not stop cleanly');
    }
  }
}

/** Starts the gRPC service modules among `targets`, sharing one metadata store and one DuckDB. */
export async function startServices(config: Config, log: Logger, targets: ReadonlySet<Target>): Promise<RunningServices> {
  const metrics = new QuarryMetrics();
  const started: QuarryModule[] = [];
  const hosted: Partial<Record<ServiceName, string>> = {};
  // One DuckDB per process: query and crosstab hosted together share the loaded snapshots.
  const engine = new SnapshotEngine(config.dataDir);
  // One cap for the process: query and crosstab hosted together share one DuckDB and its cores.
  const limiter = new HeavyCallLimiter(config.heavyCalls.maxRunning, config.heavyCalls.maxQueued);
  // One result cache for the process too: QUARRY_CACHE_MB bounds this process, not each service.
  const cache = new LruResultCache(config.resultCacheBytes, metrics);
  let store: MetadataAndCatalog | undefined;
  const stop = async () => {
    await stopAll(started, log);
    await engine.close();
    await store?.close();
  };
  try {
    if (targets.has('query') || targets.has('crosstab') || targets.has('reports')) {
      store = await openMetadataStore({ dataDir: config.dataDir, mongo: config.mongo });
    }
    const catalog = store ? instrumentStore(store, 'metadata', metrics) : undefined;
    const needStore = () => {
      if (!catalog) throw new Error('the metadata store is not open');
      return catalog;
    };
    const redisUrl = () => {
      if (!config.redis.url) throw new Error('no Redis for the chart queue (REDIS_URL or a private redis-server)');
      return config.redis.url;
    };
    const factories: Record<ServiceName, () => GrpcServiceModule | Promise<GrpcServiceModule>> = {
      query: () => createQueryModule(queryServiceConfig(config), log, { catalog: needStore(), engine, ping: () => needStore().ping(), limiter, cache, metrics }),
      crosstab: () => createCrosstabModule(crosstabServiceConfig(config), log, { catalog: needStore(), engine, ping: () => needStore().ping(), limiter, cache, metrics }),
      chart: () => createChartModule(chartServiceConfig(config, redisUrl()), log, metrics),
      reports: () => createReportsModule(reportsServiceConfig(config), log, metrics),
    };
    for (const name of SERVICE_TARGETS) {
      if (!targets.has(name)) continue;
      const module = await factories[name]();
      // Every service gets the one credential of this process's config (the gateway sends the same).
      await module.start({ internalToken: config.grpc.internalToken, tls: config.grpc.tls });
      started.push(module);
      hosted[name] = module.address;
    }
    if (targets.has('chart-worker')) {
      const worker = new ChartWorkerModule(
        { redisUrl: redisUrl(), chromiumPath: config.chart.chromiumPath, concurrency: config.chart.workerConcurrency, renderTimeoutMs: config.chart.renderTimeoutMs },
        log,
        metrics,
      );
      await worker.start();
      started.push(worker);
    }
    return {
      hosted,
      stop,
      ready: async () => {
        for (const m of started) await m.ready?.();
      },
      metrics: () => metrics.registry.getMetricsAsJSON(),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

type WorkerMessage =
  | { type: 'ready'; hosted: Partial<Record<ServiceName, string>> }
  | { type: 'error'; message: string }
  | { type: 'stopped' }
  | { type: 'metrics'; id: number; snapshot: MetricsSnapshot }
  | { type: 'readiness'; id: number; error: string | null };

/**
 * Hosts the services on a worker thread of this process: still one process and still gRPC on
 * loopback, but the gateway's event loop and the services' no longer share one core.
 */
async function startServicesInWorker(config: Config, targets: ReadonlySet<Target>): Promise<RunningServices> {
  const worker = new Worker(path.join(__dirname, '..', 'service-host.worker.js'), { workerData: { config, targets: [...targets] } });
  const next = () =>
    new Promise<WorkerMessage>((resolve, reject) => {
      const onMessage = (m: WorkerMessage) => {
        worker.off('error', onError);
        resolve(m);
      };
      const onError = (err: Error) => {
        worker.off('message', onMessage);
        reject(err);
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
    });
  const first = await next();
  if (first.type !== 'ready') {
    await worker.terminate();
    throw new Error(first.type === 'error' ? first.message : 'service worker failed to start');
  }
  // Requests to the thread carry an id; its answers come back on the same port.
  let seq = 0;
  const ask = <K extends 'metrics' | 'readiness'>(type: K) =>
    new Promise<Extract<WorkerMessage, { type: K }>>((resolve, reject) => {
      const id = ++seq;
      const timer = setTimeout(() => {
        worker.off('message', on);
        reject(new Error('the service thread did not answer'));
      }, 5000);
      const on = (m: WorkerMessage) => {
        if (m.type === type && 'id' in m && m.id === id) {
          clearTimeout(timer);
          worker.off('message', on);
          resolve(m as Extract<WorkerMessage, { type: K }>);
        }
      };
      worker.on('message', on);
      worker.postMessage({ type, id });
    });
  return {
    hosted: first.hosted,
    metrics: async () => (await ask('metrics')).snapshot,
    ready: async () => {
      const r = await ask('readiness');
      if (r.error) throw new Error(r.error);
    },
    stop: async () => {
      const stopped = new Promise<void>((resolve) => {
        const on = (m: WorkerMessage) => {
          if (m.type === 'stopped') {
            worker.off('message', on);
            resolve();
          }
        };
        worker.on('message', on);
      });
      worker.postMessage({ type: 'stop' });
      await Promise.race([stopped, new Promise((r) => setTimeout(r, config.shutdownGraceMs + 5000))]);
      await worker.terminate();
    },
  };
}

/**
 * Starts the modules of QUARRY_TARGET (mimir-style): services first so the gateway can be told
 * where the ones hosted here listen, then the gateway. Stops in reverse order.
 */
export async function startTargets(initial: Config, log: Logger): Promise<RunningProcess> {
  const targets = new Set(initial.targets);
  const serviceTargets = new Set<Target>([...SERVICE_TARGETS, 'chart-worker' as const].filter((s) => targets.has(s)));
  const withGateway = targets.has('gateway');

  // The chart queue needs Redis: REDIS_URL, or a private redis-server when this process hosts both ends.
  let privateRedis: PrivateRedis | undefined;
  let config = initial;
  const charting = targets.has('chart') || targets.has('chart-worker');
  if (charting && !config.redis.url) {
    if (!(targets.has('chart') && targets.has('chart-worker'))) {
      throw new Error('REDIS_URL is required when chart and chart-worker run in different processes');
    }
    privateRedis = await startPrivateRedis(config.redis.serverPath, { maxmemory: config.redis.privateMaxmemory });
    config = { ...config, redis: { ...config.redis, url: privateRedis.url } };
    log.info({ url: privateRedis.url, pid: privateRedis.pid }, 'private redis-server started for the chart queue');
  }
  const stopRedis = async () => {
    await privateRedis?.stop();
  };

  let services: RunningServices;
  try {
    services = withGateway && serviceTargets.size > 0 ? await startServicesInWorker(config, serviceTargets) : await startServices(config, log, serviceTargets);
  } catch (err) {
    await stopRedis();
    throw err;
  }
  if (!withGateway) {
    const ops = config.opsPort !== undefined ? await startOpsServer(config.opsPort, config.http.host, services, log) : undefined;
    return {
      port: undefined,
      stop: async () => {
        await new Promise<void>((r) => (ops ? ops.close(() => r()) : r()));
        await services.stop();
        await stopRedis();
      },
    };
  }

  let store: MetadataAndCatalog | undefined;
  let gateway: GatewayModule | undefined;
  const gatewayMetrics = new QuarryMetrics();
  try {
    store = await openMetadataStore({ dataDir: config.dataDir, mongo: config.mongo });
    const opened = store;
    gateway = new GatewayModule(gatewayConfig(config, services.hosted), instrumentStore(opened, 'metadata', gatewayMetrics), log, {
      metrics: gatewayMetrics,
      // /metrics of this process: the gateway's registry merged with the services' thread's.
      scrape: async () => mergedMetrics([await gatewayMetrics.registry.getMetricsAsJSON(), ...(serviceTargets.size ? [await services.metrics()] : [])]),
      ready: async () => {
        await opened.ping();
        if (serviceTargets.size) await services.ready();
      },
    });
    await gateway.start();
  } catch (err) {
    await services.stop();
    await store?.close();
    await stopRedis();
    throw err;
  }
  const running = gateway;
  const gatewayStore = store;
  return {
    port: running.port,
    stop: async () => {
      await stopAll([running], log);
      await services.stop();
      await gatewayStore.close();
      await stopRedis();
    },
  };
}

/** /metrics, /healthz and /readyz for a process that has no gateway to serve them (Kubernetes probes, Prometheus). */
async function startOpsServer(port: number, host: string, services: RunningServices, log: Logger) {
  const server = createServer((req, res) => {
    const reply = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return reply(405, 'text/plain', 'GET only\n');
    if (req.url === '/healthz') return reply(200, 'application/json', '{"status":"ok"}');
    if (req.url === '/readyz') {
      services.ready().then(
        () => reply(200, 'application/json', '{"status":"ready"}'),
        (err: unknown) => reply(503, 'application/json', JSON.stringify({ status: 'not ready', detail: err instanceof Error ? err.message : String(err) })),
      );
      return;
    }
    if (req.url === '/metrics') {
      services
        .metrics()
        .then((snapshot) => mergedMetrics([snapshot]))
        .then(
          (m) => reply(200, m.contentType, m.text),
          () => reply(503, 'text/plain', 'metrics unavailable\n'),
        );
      return;
    }
    reply(404, 'text/plain', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  log.info({ port: (server.address() as { port: number }).port }, 'ops endpoints listening');
  return server;
}

/** `quarry serve`: runs until SIGTERM/SIGINT, then shuts down gracefully. */
export async function serveCommand(config: Config, log: Logger): Promise<void> {
  const running = await startTargets(config, log);
  log.info({ targets: config.targets, port: running.port }, 'quarry ready');
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    running.stop().then(
      () => {
        log.info('stopped');
        log.flush();
        setTimeout(() => process.exit(0), 50).unref();
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

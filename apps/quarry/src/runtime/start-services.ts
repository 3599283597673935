import type { Config, ServiceName, Target } from '@quarry/config';
import { ChartWorkerModule, chartServiceConfig, createChartModule } from '@quarry/chart';
import { createCrosstabModule, crosstabServiceConfig } from '@quarry/crosstab';
import { createIngestModule, ingestServiceConfig } from '@quarry/ingest';
import type { Logger } from '@quarry/logger';
import { instrumentStore, QuarryMetrics, type MetricsSnapshot } from '@quarry/metrics';
import { openMetadataStore, type IndexCatalog, type MetadataStore } from '@quarry/metadata-store';
import {
  createQueryModule,
  createSearchIndex,
  LOAD_LEASE_MS,
  LoadIndexUseCase,
  queryServiceConfig,
} from '@quarry/query';
import { DuckDbSnapshotBuilder } from '@quarry/query/duckdb';
import { LruResultCache } from '@quarry/result-cache';
import { createReportsModule, openReportStore, reportsServiceConfig } from '@quarry/reports';
import type { GrpcServiceModule } from '@quarry/rpc';
import { HeavyCallLimiter } from '@quarry/runtime';
import { engineOptions, SnapshotEngine } from '@quarry/snapshots';
import { withClickHouseCopies } from '../commands/clickhouse-copies';
import { LoadIndexLoader } from './load-index-loader';
import { ModuleRunner, type ModuleMap, type StartedModule } from './module-runner';

/** The services of one process (or of its services thread), as the process sees them. */
export interface RunningServices {
  hosted: Partial<Record<ServiceName, string>>;
  /** Rejects while a module's store is unreachable. */
  ready(): Promise<void>;
  /** Rejects when a module needs a restart (a chart worker whose Chromium does not launch). */
  live?(): Promise<void>;
  /** These modules' metrics (their thread's registry). */
  metrics(): Promise<MetricsSnapshot>;
  stop(): Promise<void>;
}

export const SERVICE_TARGETS = [
  'query',
  'crosstab',
  'chart',
  'reports',
  'chart-worker',
  'ingest',
] as const satisfies readonly Target[];

/** What the service modules share in one process, and what they publish for each other. */
interface ServicesContext {
  config: Config;
  log: Logger;
  metrics: QuarryMetrics;
  // One cap for the process: query and crosstab hosted together share one DuckDB and its cores.
  limiter: HeavyCallLimiter;
  // One result cache too: QUARRY_CACHE_MB bounds this process, not each service.
  cache: LruResultCache;
  catalog?: IndexCatalog & Pick<MetadataStore, 'ping' | 'findCredential'>;
  engine?: SnapshotEngine;
  hosted: Partial<Record<ServiceName, string>>;
  targets: ReadonlySet<Target>;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not running (a module map dependency is missing)`);
  return value;
}

function redisUrl(config: Config): string {
  if (!config.redis.url) throw new Error('no Redis for the chart queue (REDIS_URL or a private redis-server)');
  return config.redis.url;
}

/** Starts a gRPC service module with this process's credential, and records where it listens. */
async function grpcService(ctx: ServicesContext, name: ServiceName, module: GrpcServiceModule): Promise<StartedModule> {
  await module.start({ internalToken: ctx.config.grpc.internalToken, tls: ctx.config.grpc.tls });
  ctx.hosted[name] = module.address;
  return { stop: () => module.stop(), ready: module.ready && (() => module.ready!()) };
}

const shared = (ctx: ServicesContext) => {
  const catalog = need(ctx.catalog, 'the metadata store');
  return {
    catalog,
    engine: need(ctx.engine, 'the snapshot engine'),
    ping: () => catalog.ping(),
    limiter: ctx.limiter,
    cache: ctx.cache,
    metrics: ctx.metrics,
  };
};

/** The service modules (Mimir-style): what each needs, and how it starts. */
const SERVICE_MODULES: ModuleMap<ServicesContext> = {
  'metadata-store': {
    start: async (ctx) => {
      const store = await openMetadataStore({ dataDir: ctx.config.dataDir, mongo: ctx.config.mongo });
      ctx.catalog = instrumentStore(store, 'metadata', ctx.metrics);
      return { stop: () => store.close() };
    },
  },
  // One DuckDB per process: query and crosstab hosted together share the loaded snapshots.
  'snapshot-engine': {
    start: async (ctx) => {
      // A memory limit from the process's budget and a spill folder on the data volume.
      // Only a crosstab reads a version's sample of records (the cell-limit estimate): its pages are read at open.
      const engine = new SnapshotEngine(ctx.config.dataDir, {
        ...engineOptions(ctx.config),
        warmSamples: ctx.targets.has('crosstab'),
      });
      ctx.engine = engine;
      return { stop: () => engine.close() };
    },
  },
  query: {
    deps: ['metadata-store', 'snapshot-engine'],
    start: async (ctx) =>
      grpcService(ctx, 'query', await createQueryModule(queryServiceConfig(ctx.config), ctx.log, shared(ctx))),
  },
  crosstab: {
    deps: ['metadata-store', 'snapshot-engine'],
    start: async (ctx) =>
      grpcService(ctx, 'crosstab', await createCrosstabModule(crosstabServiceConfig(ctx.config), ctx.log, shared(ctx))),
  },
  chart: {
    start: async (ctx) =>
      grpcService(
        ctx,
        'chart',
        await createChartModule(chartServiceConfig(ctx.config, redisUrl(ctx.config)), ctx.log, ctx.metrics),
      ),
  },
  reports: {
    start: async (ctx) =>
      grpcService(ctx, 'reports', await createReportsModule(reportsServiceConfig(ctx.config), ctx.log, ctx.metrics)),
  },
  // Uploads and source runs: loads as `quarry index load` makes them, in the search backend it loads into.
  ingest: {
    deps: ['metadata-store', 'snapshot-engine'],
    start: async (ctx) => {
      const { catalog, engine, metrics } = shared(ctx);
      const config = ctx.config;
      const search = await withClickHouseCopies(createSearchIndex(config, engine, 'load', ctx.log), config, engine);
      // Which earlier versions saved reports run on (asOf "saved"): kept within QUARRY_SNAPSHOT_KEEP_MB.
      const reports = await openReportStore({ dataDir: config.dataDir, mongo: config.mongo });
      const loads = new LoadIndexUseCase(
        new DuckDbSnapshotBuilder(config.dataDir),
        catalog,
        search.search,
        LOAD_LEASE_MS,
        {
          referencedVersions: (index) => reports.referencedIndexVersions(index),
          keepBytes: config.snapshotKeepBytes,
        },
      );
      return grpcService(
        ctx,
        'ingest',
        createIngestModule(ingestServiceConfig(config), ctx.log, {
          catalog,
          metrics,
          loader: new LoadIndexLoader(loads),
          onStop: async () => {
            await reports.close();
            await search.close();
          },
        }),
      );
    },
  },
  'chart-worker': {
    start: async (ctx) => {
      const c = ctx.config.chart;
      const worker = new ChartWorkerModule(
        {
          redisUrl: redisUrl(ctx.config),
          chromiumPath: c.chromiumPath,
          concurrency: c.workerConcurrency,
          renderTimeoutMs: c.renderTimeoutMs,
          chromiumIdleMs: c.chromiumIdleMs,
        },
        ctx.log,
        ctx.metrics,
      );
      await worker.start();
      return { stop: () => worker.stop(), ready: () => worker.ready(), live: () => worker.live() };
    },
  },
};

/** Starts the service modules among `targets` in this thread. */
export async function startServices(
  config: Config,
  log: Logger,
  targets: ReadonlySet<Target>,
): Promise<RunningServices> {
  const metrics = new QuarryMetrics();
  const ctx: ServicesContext = {
    config,
    log,
    metrics,
    limiter: new HeavyCallLimiter(config.heavyCalls),
    cache: new LruResultCache(config.resultCacheBytes, metrics),
    hosted: {},
    targets,
  };
  const runner = await ModuleRunner.start(
    SERVICE_TARGETS.filter((t) => targets.has(t)),
    SERVICE_MODULES,
    ctx,
    log,
  );
  return {
    hosted: ctx.hosted,
    ready: () => runner.ready(),
    live: () => runner.live(),
    metrics: () => metrics.registry.getMetricsAsJSON(),
    stop: () => runner.stop(),
  };
}

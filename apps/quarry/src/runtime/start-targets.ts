import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Config, Target } from '@quarry/config';
import { startPrivateRedis } from '@quarry/chart/redis';
import { createOpsApp, GatewayCallsModule, GatewayModule, gatewayConfig } from '@quarry/gateway';
import type { Logger } from '@quarry/logger';
import { instrumentStore, mergedMetrics, QuarryMetrics } from '@quarry/metrics';
import { openMetadataStore } from '@quarry/metadata-store';
import { consoleDir } from '@quarry/console';
import { SchedulerModule, schedulerConfig } from '@quarry/scheduler';
import { NotReadyError, readyStep } from '@quarry/runtime';
import { ModuleRunner, type ModuleMap } from './module-runner';
import { startServiceThread } from './service-thread';
import { SERVICE_TARGETS, startServices, type RunningServices } from './start-services';

export interface RunningProcess {
  /** The gateway's HTTP port when this process runs the gateway. */
  port: number | undefined;
  /** From now on /readyz answers 503 (draining), while calls are still taken. */
  drain(): void;
  stop(): Promise<void>;
}

/** What the process modules share; each publishes what it provides for the next. */
interface ProcessContext {
  config: Config;
  log: Logger;
  serviceTargets: ReadonlySet<Target>;
  withGateway: boolean;
  services?: RunningServices;
  /** The gateway's use cases, which the scheduler's deliveries and the gateway's HTTP server share. */
  gatewayCalls?: GatewayCallsModule;
  /** The gateway's metadata store as opened (readiness pings it, uncounted by its metrics). */
  gatewayStore?: { ping(): Promise<void> };
  port?: number;
  gatewayMetrics?: QuarryMetrics;
  ready?: () => Promise<void>;
  degraded?: () => Promise<string[]>;
  draining: boolean;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not running (a module map dependency is missing)`);
  return value;
}

function notDraining(ctx: ProcessContext): void {
  if (ctx.draining) throw new NotReadyError('the process, which is shutting down,');
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/**
 * The modules of a `quarry serve` process (Mimir-style: QUARRY_TARGET picks, `all` runs everything).
 * Started in dependency order, stopped in reverse, by ModuleRunner alone.
 */
const PROCESS_MODULES: ModuleMap<ProcessContext> = {
  // The chart queue and the schedules need Redis: REDIS_URL, or a private redis-server when this process
  // hosts both ends of the chart queue, or the gateway (whose scheduler keeps its schedules there).
  'private-redis': {
    start: async (ctx) => {
      const t = ctx.serviceTargets;
      const charts = t.has('chart') || t.has('chart-worker');
      if ((!charts && !ctx.withGateway) || ctx.config.redis.url) return { stop: async () => undefined };
      if (charts && !(t.has('chart') && t.has('chart-worker')))
        throw new Error('REDIS_URL is required when chart and chart-worker run in different processes');
      // Persistent (append-only file in the data directory): a restart loses no schedule.
      const redis = await startPrivateRedis(ctx.config.redis.serverPath, {
        maxmemory: ctx.config.redis.privateMaxmemory,
        dir: path.join(ctx.config.dataDir, 'redis'),
      });
      ctx.config = { ...ctx.config, redis: { ...ctx.config.redis, url: redis.url } };
      ctx.log.info({ port: redis.port, pid: redis.pid }, 'private redis-server started for the chart queue');
      return { stop: () => redis.stop() };
    },
  },
  services: {
    deps: ['private-redis'],
    start: async (ctx) => {
      // Beside a gateway the services get their own thread, so the two event loops do not share a core.
      const services = ctx.withGateway
        ? await startServiceThread(ctx.config, ctx.serviceTargets)
        : await startServices(ctx.config, ctx.log, ctx.serviceTargets);
      ctx.services = services;
      return { stop: () => services.stop(), ready: () => services.ready() };
    },
  },
  // The gateway in three steps, so that scheduled deliveries start after the use cases they run reports
  // through and before the HTTP server takes calls, and stop after that server has drained.
  'gateway-calls': {
    deps: ['private-redis'],
    start: async (ctx) => {
      const store = await openMetadataStore({ dataDir: ctx.config.dataDir, mongo: ctx.config.mongo });
      const metrics = new QuarryMetrics();
      const calls = new GatewayCallsModule(
        gatewayConfig(ctx.config, ctx.services?.hosted ?? {}),
        instrumentStore(store, 'metadata', metrics),
        ctx.log,
      );
      try {
        await calls.start();
      } catch (err) {
        await store.close();
        throw err;
      }
      ctx.gatewayCalls = calls;
      ctx.gatewayStore = store;
      ctx.gatewayMetrics = metrics;
      return {
        stop: async () => {
          await calls.stop();
          await store.close();
        },
      };
    },
  },
  // Scheduled deliveries (REPORTS.SCHEDULE), on the process's Redis: without one, those methods answer 503.
  scheduler: {
    deps: ['gateway-calls'],
    start: async (ctx) => {
      const calls = need(ctx.gatewayCalls, 'the gateway calls module');
      const redisUrl = ctx.config.redis.url;
      if (!redisUrl) return { stop: async () => undefined };
      const scheduler = new SchedulerModule(
        schedulerConfig(ctx.config, redisUrl),
        calls.scheduledReportRunner,
        ctx.log,
      );
      await scheduler.start();
      calls.useSchedules(scheduler);
      return {
        stop: async () => {
          calls.useSchedules(undefined);
          await scheduler.stop();
        },
      };
    },
  },
  gateway: {
    deps: ['gateway-calls', 'scheduler'],
    start: async (ctx) => {
      const calls = need(ctx.gatewayCalls, 'the gateway calls module');
      const store = need(ctx.gatewayStore, 'the metadata store');
      const services = ctx.services;
      const ready = async () => {
        notDraining(ctx);
        await readyStep('the metadata store', () => store.ping());
        await services?.ready();
      };
      const gateway = new GatewayModule(gatewayConfig(ctx.config, services?.hosted ?? {}), calls, ctx.log, {
        metrics: need(ctx.gatewayMetrics, 'the gateway metrics'),
        ready,
        consoleDir,
      });
      await gateway.start();
      ctx.port = gateway.port;
      ctx.ready = ready;
      ctx.degraded = () => gateway.degraded();
      return { stop: () => gateway.stop() };
    },
  },
  // /healthz, /readyz and /metrics on QUARRY_OPS_PORT (Kubernetes probes, Prometheus), served by the
  // gateway's own handlers; loopback unless QUARRY_OPS_HOST says otherwise. /metrics is only here: the
  // API port answers 404 to it.
  // No deps: it serves whichever of services and gateway this process runs, and comes after both (the
  // map's order breaks ties); a dependency would start the other in a process that does not run it.
  ops: {
    start: async (ctx) => {
      const services = ctx.services;
      const gatewayMetrics = ctx.gatewayMetrics;
      const app = createOpsApp({
        log: ctx.log,
        checkReady:
          ctx.ready ??
          (async () => {
            notDraining(ctx);
            await services?.ready();
          }),
        checkLive: async () => services?.live?.(),
        degraded: ctx.degraded,
        // This process's registries merged: the gateway's and the services thread's.
        scrape: async () =>
          mergedMetrics([
            ...(gatewayMetrics ? [await gatewayMetrics.registry.getMetricsAsJSON()] : []),
            ...(services ? [await services.metrics()] : []),
          ]),
        // The ops port is internal: probes and operators get the cause, as the former ops server gave it.
        readyDetails: true,
      });
      const server = createServer(app);
      const port = await listen(server, ctx.config.opsPort!, ctx.config.opsHost);
      ctx.log.info({ port, host: ctx.config.opsHost }, 'ops endpoints listening');
      return { stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
    },
  },
};

/** The modules QUARRY_TARGET asks for: services first, so the gateway knows where the local ones listen. */
export function processModules(config: Config): string[] {
  const targets = new Set(config.targets);
  const hasServices = SERVICE_TARGETS.some((t) => targets.has(t));
  const withGateway = targets.has('gateway');
  return [
    ...(hasServices ? ['services'] : []),
    ...(withGateway ? ['gateway-calls', 'scheduler', 'gateway'] : []),
    ...(config.opsPort !== undefined && (hasServices || withGateway) ? ['ops'] : []),
  ];
}

export async function startTargets(config: Config, log: Logger): Promise<RunningProcess> {
  const targets = new Set(config.targets);
  const ctx: ProcessContext = {
    config,
    log,
    serviceTargets: new Set(SERVICE_TARGETS.filter((t) => targets.has(t))),
    withGateway: targets.has('gateway'),
    draining: false,
  };
  const runner = await ModuleRunner.start(processModules(config), PROCESS_MODULES, ctx, log);
  return {
    port: ctx.port,
    drain: () => {
      ctx.draining = true;
    },
    stop: () => runner.stop(),
  };
}

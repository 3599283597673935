import type { Config, ServiceName } from '@quarry/config';
import { chartServiceConfig, createChartModule } from '@quarry/chart';
import { createCrosstabModule, crosstabServiceConfig } from '@quarry/crosstab';
import { GatewayModule, gatewayConfig } from '@quarry/gateway';
import type { Logger } from '@quarry/logger';
import { openMetadataStore, type MetadataAndCatalog } from '@quarry/metadata-store';
import { createQueryModule, queryServiceConfig } from '@quarry/query';
import { createReportsModule, reportsServiceConfig } from '@quarry/reports';
import type { GrpcServiceModule, QuarryModule } from '@quarry/rpc';
import { SnapshotEngine } from '@quarry/snapshots';

export interface RunningProcess {
  /** The gateway's HTTP port when this process runs the gateway. */
  port: number | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the modules of QUARRY_TARGET (mimir-style): services first so the gateway can be told
 * where the ones hosted here listen, then the gateway. Stops in reverse order.
 */
export async function startTargets(config: Config, log: Logger): Promise<RunningProcess> {
  const targets = new Set(config.targets);
  let store: MetadataAndCatalog | undefined;
  // One DuckDB per process: query and crosstab hosted together share the loaded snapshots.
  const engine = new SnapshotEngine(config.dataDir);
  const started: QuarryModule[] = [];
  const hosted: Partial<Record<ServiceName, string>> = {};

  const stop = async () => {
    for (const m of [...started].reverse()) {
      try {
        await m.stop();
      } catch (err) {
        log.error({ err, module: m.name }, 'module did not stop cleanly');
      }
    }
    await engine.close();
    await store?.close();
  };

  try {
    if (targets.has('gateway') || targets.has('query') || targets.has('crosstab') || targets.has('reports')) {
      store = await openMetadataStore({ dataDir: config.dataDir, mongo: config.mongo });
    }
    const catalog = store;
    const needStore = () => {
      if (!catalog) throw new Error('the metadata store is not open');
      return catalog;
    };
    const services: Array<[ServiceName, () => GrpcServiceModule]> = [
      ['query', () => createQueryModule(queryServiceConfig(config), log, { catalog: needStore(), engine })],
      ['crosstab', () => createCrosstabModule(crosstabServiceConfig(config), log)],
      ['chart', () => createChartModule(chartServiceConfig(config), log)],
      ['reports', () => createReportsModule(reportsServiceConfig(config), log)],
    ];
    for (const [name, create] of services) {
      if (!targets.has(name)) continue;
      const module = create();
      await module.start();
      started.push(module);
      hosted[name] = module.address;
    }
    let port: number | undefined;
    if (targets.has('gateway')) {
      if (!store) throw new Error('the gateway needs the metadata store');
      const gateway = new GatewayModule(gatewayConfig(config, hosted), store, log);
      await gateway.start();
      started.push(gateway);
      port = gateway.port;
    }
    return { port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
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

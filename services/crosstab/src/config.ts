import os from 'node:os';
import { serviceListenAddr, type Config, type PivotEngineName } from '@quarry/config';

export interface PivotEngineConfig {
  engine: PivotEngineName;
  clickhouse?: { url: string; database: string; cluster?: string };
  dataDir: string;
}

export function crosstabServiceConfig(config: Config) {
  return {
    listenAddr: serviceListenAddr(config, 'crosstab'),
    graceMs: config.shutdownGraceMs,
    /**
     * Threads that build and render big tables (0: on the event loop). By default as many as heavy calls
     * run at once, but one core fewer than the machine has: the service's and gateway's event loops need
     * one to answer small calls while tables are drawn.
     */
    tableThreads:
      config.tableThreads ?? Math.max(1, Math.min(config.heavyCalls.maxRunning, os.availableParallelism() - 1)),
    /** The crosstab engine (QUARRY_PIVOT_ENGINE), and where ClickHouse is when it is that one. */
    pivot: { engine: config.pivotEngine, clickhouse: config.clickhouse, dataDir: config.dataDir } as PivotEngineConfig,
  };
}

/** `pivot` unset: DuckDB (tests that build the module by hand). */
export type CrosstabServiceConfig = Omit<ReturnType<typeof crosstabServiceConfig>, 'pivot'> & {
  pivot?: PivotEngineConfig;
};

import os from 'node:os';
import { serviceListenAddr, type Config } from '@quarry/config';

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
  };
}

export type CrosstabServiceConfig = ReturnType<typeof crosstabServiceConfig>;

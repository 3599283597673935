import os from 'node:os';
import { serviceListenAddr, type Config } from '@quarry/config';

export interface CrosstabServiceConfig {
  listenAddr: string;
  graceMs: number;
  /** Threads that build and render big tables (0: on the event loop); by default no more than the heavy calls run at once, or the cores. */
  tableThreads: number;
}

export function crosstabServiceConfig(config: Config): CrosstabServiceConfig {
  return {
    listenAddr: serviceListenAddr(config, 'crosstab'),
    graceMs: config.shutdownGraceMs,
    tableThreads: config.tableThreads ?? Math.max(1, Math.min(config.heavyCalls.maxRunning, os.availableParallelism())),
  };
}

import { serviceListenAddr, type Config } from '@quarry/config';

export interface ReportsServiceConfig {
  listenAddr: string;
  graceMs: number;
}

export function reportsServiceConfig(config: Config): ReportsServiceConfig {
  return { listenAddr: serviceListenAddr(config, 'reports'), graceMs: config.shutdownGraceMs };
}

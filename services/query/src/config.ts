import { serviceListenAddr, type Config } from '@quarry/config';

export interface QueryServiceConfig {
  listenAddr: string;
  graceMs: number;
}

export function queryServiceConfig(config: Config): QueryServiceConfig {
  return { listenAddr: serviceListenAddr(config, 'query'), graceMs: config.shutdownGraceMs };
}

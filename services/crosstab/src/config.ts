import { serviceListenAddr, type Config } from '@quarry/config';

export interface CrosstabServiceConfig {
  listenAddr: string;
  graceMs: number;
}

export function crosstabServiceConfig(config: Config): CrosstabServiceConfig {
  return { listenAddr: serviceListenAddr(config, 'crosstab'), graceMs: config.shutdownGraceMs };
}

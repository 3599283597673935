import { serviceListenAddr, type Config } from '@quarry/config';

export interface ChartServiceConfig {
  listenAddr: string;
  graceMs: number;
}

export function chartServiceConfig(config: Config): ChartServiceConfig {
  return { listenAddr: serviceListenAddr(config, 'chart'), graceMs: config.shutdownGraceMs };
}

import { serviceListenAddr, type Config } from '@quarry/config';

export interface ChartServiceConfig {
  listenAddr: string;
  graceMs: number;
  redisUrl: string;
  waitTimeoutMs: number;
  /** Renders that may wait for a worker before further ones are refused (503 + Retry-After). */
  maxWaiting: number;
  /** Renders of one caller in the queue at once (QUARRY_HEAVY_PER_CALLER); the rest wait here, round robin over callers. */
  perCaller: number;
}

/** `redisUrl` is REDIS_URL, or the private redis-server's the process started (see startTargets). */
export function chartServiceConfig(config: Config, redisUrl: string): ChartServiceConfig {
  return {
    listenAddr: serviceListenAddr(config, 'chart'),
    graceMs: config.shutdownGraceMs,
    redisUrl,
    waitTimeoutMs: config.chart.waitTimeoutMs,
    maxWaiting: config.chart.queueMaxWaiting,
    perCaller: config.heavyCalls.perCaller,
  };
}

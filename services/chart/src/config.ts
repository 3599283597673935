import { serviceListenAddr, type Config } from '@quarry/config';

/** `redisUrl` is REDIS_URL, or the private redis-server's the process started (see startTargets). */
export function chartServiceConfig(config: Config, redisUrl: string) {
  return {
    listenAddr: serviceListenAddr(config, 'chart'),
    graceMs: config.shutdownGraceMs,
    redisUrl,
    waitTimeoutMs: config.chart.waitTimeoutMs,
    /** Renders that may wait for a worker before further ones are refused (503 + Retry-After). */
    maxWaiting: config.chart.queueMaxWaiting,
    /** Renders of one caller in the queue at once (QUARRY_HEAVY_PER_CALLER); the rest wait here, round robin over callers. */
    perCaller: config.heavyCalls.perCaller,
  };
}

export type ChartServiceConfig = ReturnType<typeof chartServiceConfig>;

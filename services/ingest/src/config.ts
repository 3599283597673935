import { pickConfig, serviceListenAddr, type Config } from '@quarry/config';

export function ingestServiceConfig(config: Config) {
  return {
    listenAddr: serviceListenAddr(config, 'ingest'),
    graceMs: config.shutdownGraceMs,
    /** Sources and their runs are kept there, and runs are its BullMQ jobs; without it sources answer 503. */
    redisUrl: config.redis.url,
    scheduleMinIntervalSeconds: config.schedules.minIntervalSeconds,
    ...pickConfig(config, 'dataDir', 'uploadMaxBytes', 'sources'),
  };
}

export type IngestServiceConfig = ReturnType<typeof ingestServiceConfig>;

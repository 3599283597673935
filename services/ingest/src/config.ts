import { pickConfig, serviceListenAddr, type Config } from '@quarry/config';

export function ingestServiceConfig(config: Config) {
  return {
    listenAddr: serviceListenAddr(config, 'ingest'),
    graceMs: config.shutdownGraceMs,
    ...pickConfig(config, 'dataDir', 'uploadMaxBytes'),
  };
}

export type IngestServiceConfig = ReturnType<typeof ingestServiceConfig>;

import { pickConfig, serviceListenAddr, type Config } from '@quarry/config';

export function queryServiceConfig(config: Config) {
  return {
    listenAddr: serviceListenAddr(config, 'query'),
    graceMs: config.shutdownGraceMs,
    ...pickConfig(
      config,
      'dataDir',
      'cursorSecret',
      'searchBackend',
      'typesense',
      'memoryIndexBytes',
      'exportDir',
      'exportMemoryBytes',
      'duckdbTempDir',
      'duckdbTempMaxBytes',
    ),
  };
}

export type QueryServiceConfig = ReturnType<typeof queryServiceConfig>;

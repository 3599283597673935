import { serviceListenAddr, type Config } from '@quarry/config';

export interface QueryServiceConfig {
  listenAddr: string;
  graceMs: number;
  dataDir: string;
  cursorSecret: string | undefined;
  /** QUARRY_SEARCH_BACKEND: the one engine this service searches with. */
  searchBackend: 'embedded' | 'typesense';
  typesense: { url: string; apiKey: string } | undefined;
  /** Memory for small indexes searched in memory; 0: every search through the engine. */
  memoryIndexBytes: number;
}

export function queryServiceConfig(config: Config): QueryServiceConfig {
  return {
    listenAddr: serviceListenAddr(config, 'query'),
    graceMs: config.shutdownGraceMs,
    dataDir: config.dataDir,
    cursorSecret: config.cursorSecret,
    searchBackend: config.searchBackend,
    typesense: config.typesense,
    memoryIndexBytes: config.memoryIndexBytes,
  };
}

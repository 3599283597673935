import { serviceListenAddr, type Config } from '@quarry/config';

export interface QueryServiceConfig {
  listenAddr: string;
  graceMs: number;
  dataDir: string;
  cursorSecret: string | undefined;
  typesense: { url: string; apiKey: string } | undefined;
}

export function queryServiceConfig(config: Config): QueryServiceConfig {
  return {
    listenAddr: serviceListenAddr(config, 'query'),
    graceMs: config.shutdownGraceMs,
    dataDir: config.dataDir,
    cursorSecret: config.cursorSecret,
    typesense: config.typesense,
  };
}

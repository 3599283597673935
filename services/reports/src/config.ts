import { serviceListenAddr, type Config } from '@quarry/config';

export interface ReportsServiceConfig {
  listenAddr: string;
  graceMs: number;
  dataDir: string;
  mongo: { url: string; db: string } | undefined;
  cursorSecret: string | undefined;
  /** QUARRY_REPORT_TRASH_DAYS: how long a deleted report can be restored. */
  trashDays: number;
}

export function reportsServiceConfig(config: Config): ReportsServiceConfig {
  return {
    listenAddr: serviceListenAddr(config, 'reports'),
    graceMs: config.shutdownGraceMs,
    dataDir: config.dataDir,
    mongo: config.mongo,
    cursorSecret: config.cursorSecret,
    trashDays: config.reportTrashDays,
  };
}

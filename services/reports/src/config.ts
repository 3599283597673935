import { pickConfig, serviceListenAddr, type Config } from '@quarry/config';

export function reportsServiceConfig(config: Config) {
  return {
    listenAddr: serviceListenAddr(config, 'reports'),
    graceMs: config.shutdownGraceMs,
    ...pickConfig(config, 'dataDir', 'mongo', 'cursorSecret'),
    /** How long a deleted report can be restored (QUARRY_REPORT_TRASH_DAYS). */
    trashDays: config.reportTrashDays,
  };
}

export type ReportsServiceConfig = ReturnType<typeof reportsServiceConfig>;

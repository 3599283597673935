import type { Logger } from '@quarry/logger';
import { instrumentStore, type QuarryMetrics } from '@quarry/metrics';
import { CursorCodec } from '@quarry/paging';
import { DATA_DIR_KEYS, requireDataDirKey } from '@quarry/config';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { ReportsServiceConfig } from './config';
import {
  DeleteReportUseCase,
  FindReportsUseCase,
  ReportMetadataUseCase,
  SaveReportUseCase,
  UpdateReportUseCase,
  trashLimit,
} from './domain/reports.use-cases';
import { openReportStore } from './open-report-store';
import { reportsHandlers } from './transport/grpc-reports.handlers';

export async function createReportsModule(
  config: ReportsServiceConfig,
  log: Logger,
  metrics?: QuarryMetrics,
): Promise<GrpcServiceModule> {
  const moduleLog = log.child({ module: 'reports' });
  const opened = await openReportStore(config);
  const store = metrics ? instrumentStore(opened, 'reports', metrics) : opened;
  // What stayed in the trash past QUARRY_REPORT_TRASH_DAYS goes at start too, not only at the next delete.
  await store.purgeTrash(trashLimit(new Date(), config.trashDays));
  const cursors = new CursorCodec(
    requireDataDirKey({ ...DATA_DIR_KEYS.cursor, configured: config.cursorSecret, dataDir: config.dataDir }),
  );
  const handlers = reportsHandlers(moduleLog, {
    save: new SaveReportUseCase(store),
    find: new FindReportsUseCase(store, cursors),
    metadata: new ReportMetadataUseCase(store),
    update: new UpdateReportUseCase(store),
    remove: new DeleteReportUseCase(store, config.trashDays),
  });
  return new GrpcServiceModule({
    name: 'reports',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.ReportsService',
    definition: loadQuarryProto().quarry.v1.ReportsService.service,
    implementation: handlers,
    readiness: () => store.ping(),
    metrics,
    onStop: () => opened.close(),
  });
}

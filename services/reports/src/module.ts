import type { Logger } from '@quarry/logger';
import { CursorCodec, loadCursorSecret } from '@quarry/paging';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { ReportsServiceConfig } from './config';
import { FindReportsUseCase, ReportMetadataUseCase, SaveReportUseCase } from './domain/reports.use-cases';
import { openReportStore } from './open-report-store';
import { reportsHandlers } from './transport/grpc-reports.handlers';

export async function createReportsModule(config: ReportsServiceConfig, log: Logger): Promise<GrpcServiceModule> {
  const moduleLog = log.child({ module: 'reports' });
  const store = await openReportStore(config);
  const cursors = new CursorCodec(loadCursorSecret(config.cursorSecret, config.dataDir));
  const handlers = reportsHandlers(moduleLog, new SaveReportUseCase(store), new FindReportsUseCase(store, cursors), new ReportMetadataUseCase(store));
  return new GrpcServiceModule(
    'reports',
    moduleLog,
    config.listenAddr,
    config.graceMs,
    (server) => server.addService(loadQuarryProto().quarry.v1.ReportsService.service, handlers),
    () => store.close(),
  );
}

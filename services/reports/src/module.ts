import type { Logger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { ReportsServiceConfig } from './config';
import { reportsHandlers } from './transport/grpc-reports.handlers';

export function createReportsModule(config: ReportsServiceConfig, log: Logger): GrpcServiceModule {
  const moduleLog = log.child({ module: 'reports' });
  return new GrpcServiceModule('reports', moduleLog, config.listenAddr, config.graceMs, (server) => {
    server.addService(loadQuarryProto().quarry.v1.ReportsService.service, reportsHandlers(moduleLog));
  });
}

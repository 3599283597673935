import type { Logger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { ChartServiceConfig } from './config';
import { chartHandlers } from './transport/grpc-chart.handlers';

export function createChartModule(config: ChartServiceConfig, log: Logger): GrpcServiceModule {
  const moduleLog = log.child({ module: 'chart' });
  return new GrpcServiceModule('chart', moduleLog, config.listenAddr, config.graceMs, (server) => {
    server.addService(loadQuarryProto().quarry.v1.ChartService.service, chartHandlers(moduleLog));
  });
}

import type { Logger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import { BullMqChartQueue } from './adapters/bullmq-chart-queue.adapter';
import type { ChartServiceConfig } from './config';
import { RenderChartUseCase } from './domain/render-chart.use-case';
import { chartHandlers } from './transport/grpc-chart.handlers';

export function createChartModule(config: ChartServiceConfig, log: Logger): GrpcServiceModule {
  const moduleLog = log.child({ module: 'chart' });
  const queue = new BullMqChartQueue(config.redisUrl);
  const render = new RenderChartUseCase(queue, config.waitTimeoutMs);
  return new GrpcServiceModule(
    'chart',
    moduleLog,
    config.listenAddr,
    config.graceMs,
    (server) => server.addService(loadQuarryProto().quarry.v1.ChartService.service, chartHandlers(moduleLog, render)),
    () => queue.close(),
  );
}

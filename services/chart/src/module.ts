import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import { BullMqChartQueue } from './adapters/bullmq-chart-queue.adapter';
import type { ChartServiceConfig } from './config';
import { RenderChartUseCase } from './domain/render-chart.use-case';
import { chartHandlers } from './transport/grpc-chart.handlers';

export function createChartModule(config: ChartServiceConfig, log: Logger, metrics?: QuarryMetrics): GrpcServiceModule {
  const moduleLog = log.child({ module: 'chart' });
  const queue = new BullMqChartQueue({ redisUrl: config.redisUrl, maxWaiting: config.maxWaiting });
  const render = new RenderChartUseCase(queue, config.waitTimeoutMs);
  // Queue depth for /metrics, sampled while the service runs.
  const depth = metrics
    ? setInterval(() => {
        queue.counts().then(
          (counts) => {
            for (const [state, n] of Object.entries(counts)) metrics.chartQueueJobs.set({ state }, n);
          },
          () => undefined,
        );
      }, 5000)
    : undefined;
  depth?.unref();
  return new GrpcServiceModule({
    name: 'chart',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.ChartService',
    definition: loadQuarryProto().quarry.v1.ChartService.service,
    implementation: chartHandlers(moduleLog, render),
    readiness: () => queue.ready(),
    metrics,
    onStop: async () => {
      clearInterval(depth);
      await queue.close();
    },
  });
}

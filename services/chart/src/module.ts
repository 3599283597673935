import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import { HeavyCallLimiter } from '@quarry/runtime';
import { BullMqChartQueue } from './adapters/bullmq-chart-queue.adapter';
import { QUEUE_FULL_RETRY_AFTER_SECONDS } from './adapters/bullmq-names';
import type { ChartServiceConfig } from './config';
import { RenderChartUseCase } from './domain/render-chart.use-case';
import { chartHandlers } from './transport/grpc-chart.handlers';

export function createChartModule(config: ChartServiceConfig, log: Logger, metrics?: QuarryMetrics): GrpcServiceModule {
  const moduleLog = log.child({ module: 'chart' });
  const queue = new BullMqChartQueue({ redisUrl: config.redisUrl, maxWaiting: config.maxWaiting });
  // Fair admission before enqueue: BullMQ's own queue is first in, first out over everyone (its groups
  // are a Pro feature), so each caller has at most perCaller renders in it and the rest wait here; a
  // freed place goes round robin over the callers waiting. Per chart-service process.
  const admission = new HeavyCallLimiter({
    maxRunning: config.maxWaiting,
    perCaller: config.perCaller,
    maxQueued: config.maxWaiting,
    retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS,
  });
  const render = new RenderChartUseCase(queue, config.waitTimeoutMs, (caller, signal, work) =>
    admission.run(caller, signal, work),
  );
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

export { createChartModule } from './module';
export { chartServiceConfig, type ChartServiceConfig } from './config';
export { ChartWorkerModule, type ChartWorkerConfig } from './worker/chart-worker.module';
export { startPrivateRedis, type PrivateRedis, type PrivateRedisOptions } from './adapters/private-redis';
export { ChromiumRenderer } from './adapters/chromium-renderer.adapter';
export { buildChartOption } from './domain/chart-option';
export { chartKind } from './domain/chart-types';
export { renderSvg } from './adapters/echarts-svg-renderer.adapter';

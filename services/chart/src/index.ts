export { createChartModule } from './module';
export { chartServiceConfig, type ChartServiceConfig } from './config';
export { ChartWorkerModule, type ChartWorkerConfig } from './worker/chart-worker.module';
export { buildChartOption } from './domain/chart-option/build-chart-option';
export { chartKind } from './domain/chart-types';

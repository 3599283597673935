export { createChartModule } from './module';
export { chartServiceConfig, type ChartServiceConfig } from './config';

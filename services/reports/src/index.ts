export { createReportsModule } from './module';
export { reportsServiceConfig, type ReportsServiceConfig } from './config';

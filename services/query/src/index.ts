export { createQueryModule } from './module';
export { queryServiceConfig, type QueryServiceConfig } from './config';

export { createCrosstabModule } from './module';
export { crosstabServiceConfig, type CrosstabServiceConfig } from './config';

export { createCrosstabModule } from './module';
export { crosstabServiceConfig, type CrosstabServiceConfig } from './config';
export { RunCrosstabUseCase } from './domain/run-crosstab.use-case';

export { createCrosstabModule } from './module';
export { crosstabServiceConfig, type CrosstabServiceConfig } from './config';
export type { CrosstabGrid } from './domain/crosstab-grid';
export { RunCrosstabUseCase } from './domain/run-crosstab.use-case';
export { DuckDbPivotEngine } from './adapters/duckdb-pivot-engine.adapter';

export { createQueryModule, createSearchIndex, type ServiceDeps } from './module';
export { queryServiceConfig, type QueryServiceConfig } from './config';
export { LoadIndexUseCase, type LoadIndexInput } from './domain/load-index.use-case';
export { DuckDbSnapshotBuilder } from './adapters/duckdb-snapshot-builder.adapter';
export type { SearchIndex, SearchPlan, SearchPage, SortKey } from './ports/search-index.port';
export { DuckDbSearchIndex } from './adapters/duckdb-search-index.adapter';
export { TypesenseSearchIndex } from './adapters/typesense-search-index.adapter';

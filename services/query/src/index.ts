export { createQueryModule, createSearchIndex, type ServiceDeps } from './module';
export { queryServiceConfig, type QueryServiceConfig } from './config';
export { LOAD_LEASE_MS, LoadIndexUseCase, type LoadIndexInput, type LoadResult } from './domain/load-index.use-case';
export type { SearchIndex, SearchPlan, SearchPage, SortKey } from './ports/search-index.port';
export type { LoadReport, RejectedRowInfo, SnapshotRetention } from './ports/snapshot-builder.port';

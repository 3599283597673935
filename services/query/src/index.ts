export { createQueryModule, createSearchIndex, type ServiceDeps } from './module';
export { queryServiceConfig, type QueryServiceConfig } from './config';
export { LoadIndexUseCase, type LoadIndexInput, type LoadResult } from './domain/load-index.use-case';
export type { SearchIndex, SearchPlan, SearchPage, SortKey } from './ports/search-index.port';

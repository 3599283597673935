export { createIngestModule, type IngestDeps } from './module';
export { ingestServiceConfig, type IngestServiceConfig } from './config';
export { checkWrite, type LoadOutcome } from './domain/upload-records.use-case';
export type {
  IndexLoaded,
  IndexLoader,
  IndexLoadRequest,
  LoadProgress,
  RejectedRowView,
} from './ports/index-loader.port';

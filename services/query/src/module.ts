import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { IndexCatalog } from '@quarry/metadata-store';
import { CursorCodec, loadCursorSecret } from '@quarry/paging';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import type { SnapshotEngine } from '@quarry/snapshots';
import { DuckDbSearchIndex } from './adapters/duckdb/duckdb-search-index.adapter';
import { TypesenseSearchIndex } from './adapters/typesense/typesense-search-index.adapter';
import type { QueryServiceConfig } from './config';
import { ExecuteQueryUseCase } from './domain/execute-query.use-case';
import { FindIndexesUseCase } from './domain/find-indexes.use-case';
import type { ResultCache } from '@quarry/result-cache';
import type { SearchIndex } from './ports/search-index.port';
import { queryHandlers } from './transport/grpc-query.handlers';

/** Typesense when configured (production), else DuckDB over the snapshot (embedded default). */
export function createSearchIndex(
  config: Pick<QueryServiceConfig, 'typesense' | 'memoryIndexBytes'>,
  engine: SnapshotEngine,
  log?: Logger,
): SearchIndex {
  if (config.typesense) return new TypesenseSearchIndex(config.typesense, engine);
  return new DuckDbSearchIndex(engine, { inMemoryBudgetBytes: config.memoryIndexBytes, log });
}

export interface ServiceDeps {
  catalog: IndexCatalog;
  engine: SnapshotEngine;
  /** Rejects while the metadata store cannot be reached. */
  ping: () => Promise<void>;
  /** The process's cap on concurrent searches and crosstabs (shared with the crosstab service). */
  limiter: HeavyCallLimiter;
  /** The process's result cache (shared with the crosstab service). */
  cache: ResultCache;
  metrics?: QuarryMetrics;
}

export function createQueryModule(config: QueryServiceConfig, log: Logger, deps: ServiceDeps): GrpcServiceModule {
  const moduleLog = log.child({ module: 'query' });
  const search = createSearchIndex(config, deps.engine, moduleLog);
  const cursors = new CursorCodec(loadCursorSecret(config.cursorSecret, config.dataDir));
  const executeQuery = new ExecuteQueryUseCase(deps.catalog, search, deps.cache);
  const findIndexes = new FindIndexesUseCase(deps.catalog, cursors);
  return new GrpcServiceModule({
    name: 'query',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.QueryService',
    definition: loadQuarryProto().quarry.v1.QueryService.service,
    implementation: queryHandlers(moduleLog, executeQuery, findIndexes, deps.limiter),
    readiness: deps.ping,
    metrics: deps.metrics,
    onStop: () => search.close(),
  });
}

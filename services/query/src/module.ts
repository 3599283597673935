import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import type { IndexCatalog } from '@quarry/metadata-store';
import { CursorCodec } from '@quarry/paging';
import { DATA_DIR_KEYS, requireDataDirKey } from '@quarry/config';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import { exportEngineOptions, SnapshotEngine } from '@quarry/snapshots';
import { DuckDbSearchIndex } from './adapters/duckdb/duckdb-search-index.adapter';
import { DuckDbSearchExporter } from './adapters/duckdb/duckdb-search-exporter.adapter';
import { ExportEngineLease } from './adapters/duckdb/export-engine-lease';
import { ExportSearchUseCase } from './domain/export-search.use-case';
import { exportHandlers } from './transport/grpc-export.handlers';
import { checkSearchBackendMark, type SearchBackendUse } from './adapters/search-backend-mark';
import { TypesenseSearchIndex } from './adapters/typesense/typesense-search-index.adapter';
import type { QueryServiceConfig } from './config';
import { ExecuteQueryUseCase } from './domain/execute-query.use-case';
import { FindIndexesUseCase } from './domain/find-indexes.use-case';
import { SharedComputations, type ResultCache } from '@quarry/result-cache';
import type { SearchIndex } from './ports/search-index.port';
import { queryHandlers } from './transport/grpc-query.handlers';

/**
 * The engine QUARRY_SEARCH_BACKEND names, and no other: Typesense (production) or
 * DuckDB over the snapshot (embedded). Refuses, with what to set, Typesense without its settings and a
 * backend other than the one the data directory's indexes were loaded into (search-backend-mark.ts).
 */
export function createSearchIndex(
  config: Pick<QueryServiceConfig, 'searchBackend' | 'typesense' | 'memoryIndexBytes' | 'dataDir'>,
  engine: SnapshotEngine,
  use: SearchBackendUse,
  log?: Logger,
): SearchIndex {
  if (config.searchBackend === 'typesense' && !config.typesense) {
    throw AppError.invalid(
      'QUARRY_SEARCH_BACKEND=typesense needs TYPESENSE_URL and TYPESENSE_API_KEY in this process; set them, or QUARRY_SEARCH_BACKEND=embedded',
    );
  }
  checkSearchBackendMark(config.dataDir, config.searchBackend, use);
  if (config.searchBackend === 'typesense' && config.typesense)
    return new TypesenseSearchIndex(config.typesense, engine);
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
  const search = createSearchIndex(config, deps.engine, 'serve', moduleLog);
  const cursors = new CursorCodec(
    requireDataDirKey({ ...DATA_DIR_KEYS.cursor, configured: config.cursorSecret, dataDir: config.dataDir }),
  );
  const executeQuery = new ExecuteQueryUseCase(
    deps.catalog,
    search,
    deps.cache,
    Date.now,
    new SharedComputations('search', deps.metrics),
  );
  // Exports write with a DuckDB of their own, under their own memory limit (spilling past it), so a large
  // export neither grows the process with its rows nor takes the searches' and crosstabs' memory.
  const exportEngine = new SnapshotEngine(config.dataDir, exportEngineOptions(config));
  const exportLease = new ExportEngineLease(exportEngine);
  const findIndexes = new FindIndexesUseCase(deps.catalog, cursors);
  return new GrpcServiceModule({
    name: 'query',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.QueryService',
    definition: loadQuarryProto().quarry.v1.QueryService.service,
    implementation: {
      ...queryHandlers(moduleLog, executeQuery, findIndexes, deps.limiter),
      // Exports write with DuckDB whatever the search backend: the snapshot is always there.
      ...exportHandlers(
        moduleLog,
        new ExportSearchUseCase(deps.catalog, new DuckDbSearchExporter(exportLease)),
        deps.limiter,
        config.exportDir,
      ),
    },
    // Not ready either once a loader marked the data directory for the other backend after this
    // process started (it checked the mark at start, when there may have been none): it would search
    // data that is not there. A restart would not help, so liveness is untouched.
    readiness: async () => {
      await deps.ping();
      checkSearchBackendMark(config.dataDir, config.searchBackend, 'serve');
      // On the embedded engine searches run on the snapshots: ready once every published one is open.
      // Typesense holds its own copy; this process opens none to search.
      if (config.searchBackend === 'embedded') {
        await deps.engine.assertWarm(() => deps.catalog.listIndexes(), moduleLog);
      }
    },
    metrics: deps.metrics,
    onStop: async () => {
      await search.close();
      await exportLease.idle();
      await exportEngine.close();
    },
  });
}

import type { Logger } from '@quarry/logger';
import type { IndexCatalog } from '@quarry/metadata-store';
import type { QuarryMetrics } from '@quarry/metrics';
import type { SnapshotEngine } from '@quarry/snapshots';
import { GrpcServiceModule, loadQuarryProto } from '@quarry/rpc';
import { closeWithin, type HeavyCallLimiter } from '@quarry/runtime';
import { DuckDbPivotEngine } from './adapters/duckdb/duckdb-pivot-engine.adapter';
import { independentPivots } from './domain/independent-pivots';
import { ChdbRunner } from './adapters/clickhouse/chdb-runner';
import { ClickHouseClientRunner } from './adapters/clickhouse/clickhouse-client-runner';
import { ClickHousePivotEngine } from './adapters/clickhouse/clickhouse-pivot-engine.adapter';
import { ThreadTableRenderer } from './adapters/table/thread-table-renderer.adapter';
import type { CrosstabServiceConfig } from './config';
import { RunCrosstabUseCase } from './domain/run-crosstab.use-case';
import { WARM_BUDGET_MS, WARM_RUNS, WarmRollupsUseCase } from './domain/warm-rollups.use-case';
import { SharedComputations, type ResultCache } from '@quarry/result-cache';
import { crosstabHandlers } from './transport/grpc-crosstab.handlers';

/**
 * DuckDB is the crosstab engine unless QUARRY_PIVOT_ENGINE=clickhouse (Typesense cannot sum per group):
 * then a ClickHouse server or cluster at CLICKHOUSE_URL, or chDB in this process over the snapshots.
 */
export function createCrosstabModule(
  config: CrosstabServiceConfig,
  log: Logger,
  deps: {
    catalog: IndexCatalog;
    engine: SnapshotEngine;
    ping: () => Promise<void>;
    limiter: HeavyCallLimiter;
    cache: ResultCache;
    metrics?: QuarryMetrics;
  },
): GrpcServiceModule {
  const moduleLog = log.child({ module: 'crosstab' });
  const tables = config.tableThreads > 0 ? new ThreadTableRenderer({ threads: config.tableThreads }) : undefined;
  const pivot = config.pivot;
  const clickhouse =
    pivot?.engine === 'clickhouse'
      ? new ClickHousePivotEngine(
          pivot.clickhouse ? new ClickHouseClientRunner(pivot.clickhouse) : new ChdbRunner(pivot.dataDir),
        )
      : undefined;
  const engine = clickhouse ?? new DuckDbPivotEngine(deps.engine);
  const shared = new SharedComputations('crosstab', deps.metrics);
  // verify: true recomputes along plain passes; on DuckDB its totals are also rolled up another way
  // (grouping sets in DuckDB, not the JS roll-up), so a fault in either shows as a mismatch.
  const verifier = clickhouse ? undefined : independentPivots(new DuckDbPivotEngine(deps.engine, 0));
  const run = new RunCrosstabUseCase(deps.catalog, engine, deps.cache, Date.now, tables, shared, verifier);
  const warm = new WarmRollupsUseCase(deps.catalog, run);
  const stopping = new AbortController();
  return new GrpcServiceModule({
    name: 'crosstab',
    log: moduleLog,
    listenAddr: config.listenAddr,
    graceMs: config.graceMs,
    serviceName: 'quarry.v1.CrosstabService',
    definition: loadQuarryProto().quarry.v1.CrosstabService.service,
    implementation: crosstabHandlers(moduleLog, run, deps.limiter),
    // Ready once the metadata store answers and every published index is open.
    readiness: async () => {
      await deps.ping();
      // ClickHouse opens nothing in this process ahead of a call.
      if (!clickhouse) await deps.engine.assertWarm(() => deps.catalog.listIndexes(), moduleLog);
    },
    // The start waits for the warming, but not for a catalog that does not answer (the warming goes on
    // then, and the module's stop ends it).
    warmUp: async () => {
      const started = performance.now();
      const warming = warm.run(WARM_BUDGET_MS, WARM_RUNS, stopping.signal).then(
        (ran) => {
          if (ran) moduleLog.info({ crosstabs: ran, ms: Math.round(performance.now() - started) }, 'rollups warmed');
        },
        (err: unknown) => moduleLog.warn({ err }, 'warming the rollups failed'),
      );
      await closeWithin(warming, WARM_BUDGET_MS);
    },
    metrics: deps.metrics,
    onStop: async () => {
      stopping.abort();
      await tables?.close();
      await clickhouse?.close();
    },
  });
}

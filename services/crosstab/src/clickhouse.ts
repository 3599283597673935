// The ClickHouse engine's entry point (`@quarry/crosstab/clickhouse`): what the loader needs to copy each
// version into a ClickHouse server before the catalog names it, and drop it with pruning.
export {
  ClickHouseClientRunner,
  versionTable,
  type ClickHouseServer,
} from './adapters/clickhouse/clickhouse-client-runner';

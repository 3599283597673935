// The embedded engine's entry point (`@quarry/query/duckdb`): the CLI, benchmarks and tests reach the
// DuckDB adapters only through a subpath that names the driver.
export { DuckDbSnapshotBuilder } from './adapters/duckdb/duckdb-snapshot-builder.adapter';
export { DuckDbSearchIndex } from './adapters/duckdb/duckdb-search-index.adapter';

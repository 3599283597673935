// The DuckDB pivot engine's entry point (`@quarry/crosstab/duckdb`): code that builds a crosstab use case
// itself (benchmarks) reaches the engine through a subpath that names it; `@quarry/crosstab` exports no
// adapter.
export { DuckDbPivotEngine } from './adapters/duckdb/duckdb-pivot-engine.adapter';

/*
 * The differential of crosstab-differential.test.ts, every shape and drill of it, with the crosstab
 * service on ClickHouse (QUARRY_PIVOT_ENGINE=clickhouse, chDB in-process over the snapshots): ClickHouse's
 * answers against the same SQL written by hand on DuckDB, cell by cell, on the same adversarial data.
 * Jest gives each test file its own globals, so the setting reaches only this file's copy of the suite.
 */
(globalThis as { quarryPivotEngine?: string }).quarryPivotEngine = 'clickhouse';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./crosstab-differential.test');

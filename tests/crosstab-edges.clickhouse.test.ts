/*
 * The crosstab edges of crosstab-edges.test.ts with the crosstab service on ClickHouse
 * (QUARRY_PIVOT_ENGINE=clickhouse, chDB in-process over the snapshots), against the same plain-JS values.
 * Jest gives each test file its own globals, so the setting reaches only this file's copy of the suite.
 */
(globalThis as { quarryPivotEngine?: string }).quarryPivotEngine = 'clickhouse';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./crosstab-edges.test');

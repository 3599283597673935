/*
 * The period comparisons of crosstab-compare.test.ts, every shape and rendering of it, with the crosstab
 * service on ClickHouse (QUARRY_PIVOT_ENGINE=clickhouse, chDB in-process over the snapshots): ClickHouse's
 * answers against the same values computed in plain JS from the records.
 * Jest gives each test file its own globals, so the setting reaches only this file's copy of the suite.
 */
(globalThis as { quarryPivotEngine?: string }).quarryPivotEngine = 'clickhouse';
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./crosstab-compare.test');

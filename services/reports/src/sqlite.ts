// The embedded adapter's entry point (`@quarry/reports/sqlite`): composition roots, benchmarks and tests
// reach the driver only through a subpath that names it, so `@quarry/reports` itself loads none.
export { SqliteReportStore } from './adapters/sqlite-report-store.adapter';

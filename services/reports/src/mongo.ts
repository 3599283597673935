// The production adapter's entry point (`@quarry/reports/mongo`); see sqlite.ts.
export { MongoReportStore } from './adapters/mongo-report-store.adapter';

export { createReportsModule } from './module';
export { reportsServiceConfig, type ReportsServiceConfig } from './config';
export { openReportStore } from './open-report-store';
export type { ReportStore, ReportRecord, NewReport } from './ports/report-store.port';
export { summary, RestoreReportUseCase, trashLimit } from './domain/reports.use-cases';

export { SchedulerModule, type ScheduleService } from './module';
export { schedulerConfig, type SchedulerConfig } from './config';
export type { ReportRunner, ReportOutput, ScheduleOwner } from './ports/report-runner.port';

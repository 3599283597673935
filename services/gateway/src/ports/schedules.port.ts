import type {
  AlertCondition,
  AlertOutcome,
  CompleteReportsSchedule,
  ReportsScheduleResult,
  ReportsSchedulesResult,
  ReportsUnscheduleResult,
  ScheduleFormat,
} from '@quarry/contract';

/** Who owns a schedule: the user, and the token a delivery runs through. */
export interface ScheduleOwner {
  userId: string;
  userName: string;
  tokenHash: string;
}

/** Scheduled deliveries (REPORTS.SCHEDULE, .SCHEDULES, .UNSCHEDULE), hosted beside the gateway. */
export interface Schedules {
  schedule(owner: ScheduleOwner, params: CompleteReportsSchedule): Promise<ReportsScheduleResult>;
  list(owner: ScheduleOwner, guid: string | undefined): Promise<ReportsSchedulesResult>;
  unschedule(owner: ScheduleOwner, scheduleId: string): Promise<ReportsUnscheduleResult>;
}

/** One run of a report as a delivery carries it. */
export interface ScheduledOutput {
  name: string;
  version: number;
  contentType: string;
  /** Null when the output goes as a link. */
  data: unknown;
  /** An output over QUARRY_ATTACHMENT_MAX_BYTES: a signed link to its file instead of the data. */
  link?: { url: string; expiresAt: string; bytes: number };
  /** Records or cells returned, as the audit trail counts them. */
  rows: number | null;
  /** With an alert: what it found; when it does not hold, nothing else was run. */
  alert?: AlertOutcome;
}

/** One scheduled delivery's try, as the scheduler reports it for the audit trail. */
export interface ScheduledDeliveryAudit {
  scheduleId: string;
  owner: ScheduleOwner;
  destination: string;
  version: number | null;
  rows: number | null;
  outcome: string;
  durationMs: number;
}

/** What the scheduler needs from the gateway: run this report as this user in this format. */
export interface ScheduledReportRunner {
  check(owner: ScheduleOwner, guid: string, format: ScheduleFormat, when?: AlertCondition): Promise<void>;
  run(owner: ScheduleOwner, guid: string, format: ScheduleFormat, when?: AlertCondition): Promise<ScheduledOutput>;
  audit(record: ScheduledDeliveryAudit): void;
}

/** The scheduler as a module the gateway starts once its use cases exist. */
export interface SchedulesModule extends Schedules {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Rejects, naming the store, while the schedules' store does not answer. */
  ready?(): Promise<void>;
}

import type { AlertCondition, AlertOutcome, ScheduleFormat } from '@quarry/contract';

/** Who a delivery runs as: the schedule's owner, through the token that created it. */
export interface ScheduleOwner {
  userId: string;
  userName: string;
  tokenHash: string;
}

/** One run of a report, in the asked format, as REPORTS.EXECUTE's data carries it. */
export interface ReportOutput {
  /** The report's name, for the mail subject and the attachment's file name. */
  name: string;
  version: number;
  contentType: string;
  /** JSON as a value; HTML, CSV, JSON Lines and SVG as text; XLSX, Parquet, PDF and PNG as base64; null with a link. */
  data: unknown;
  /** An output over QUARRY_ATTACHMENT_MAX_BYTES: a signed link to its file, sent instead of the data. */
  link?: { url: string; expiresAt: string; bytes: number };
  /** Records or cells the run returned, as the audit trail counts them; null when nothing countable. */
  rows: number | null;
  /** With an alert: what it found (when it does not hold, `data` is not produced and nothing is sent). */
  alert?: AlertOutcome;
}

/** One scheduled delivery's try, for the audit trail. */
export interface DeliveryAuditRecord {
  scheduleId: string;
  owner: ScheduleOwner;
  /** The webhook's host[:port], or the e-mail domains, the output went to. */
  destination: string;
  /** The report version delivered; null when the report did not run. */
  version: number | null;
  rows: number | null;
  outcome: 'delivered' | 'retrying' | 'failed' | 'stopped' | 'refused' | 'skipped';
  durationMs: number;
}

/**
 * "Run this report as this user in this format". Rejects with AppError: UNAUTHENTICATED when the token
 * is revoked or expired or its owner removed, NOT_FOUND when the report is deleted or no longer
 * readable, FORBIDDEN when the token lost a scope, INVALID_ARGUMENT when the format no longer suits the
 * report: the schedule stops with that reason. Any other code is a fault worth retrying.
 */
export interface ReportRunner {
  /**
   * At schedule time: the report is visible to the owner and can be delivered in `format`, and an alert
   * suits it (a crosstab report with that total).
   */
  check(owner: ScheduleOwner, guid: string, format: ScheduleFormat, when?: AlertCondition): Promise<void>;
  run(owner: ScheduleOwner, guid: string, format: ScheduleFormat, when?: AlertCondition): Promise<ReportOutput>;
  /** Records a delivery's try in the deployment's audit trail. */
  audit(record: DeliveryAuditRecord): void;
}

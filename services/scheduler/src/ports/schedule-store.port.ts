import type { AlertCondition, DeliveryRecord, ScheduleDelivery, ScheduleFormat } from '@quarry/contract';

export type { DeliveryRecord } from '@quarry/contract';

export interface ScheduleRecord {
  id: string;
  ownerId: string;
  ownerName: string;
  /**
   * SHA-256 of the token that created the schedule (what the metadata store keeps too, never the token):
   * each delivery runs with that token's rights as they are then, so revoking it stops the schedule.
   */
  tokenHash: string;
  guid: string;
  cron: string;
  timeZone: string;
  format: ScheduleFormat;
  deliver: ScheduleDelivery;
  status: 'active' | 'stopped';
  stoppedReason: string | null;
  createdAt: string;
  /** An alert: a run delivers only when it holds. */
  when?: AlertCondition;
  /** The digest of the matching set of the last alert delivered (what onlyOnChange compares with). */
  lastAlert?: string;
}

/** Per owner and UTC day (QUARRY_DELIVERIES_PER_DAY, QUARRY_RECIPIENTS_PER_DAY). */
export interface DailyCaps {
  deliveries: number;
  recipients: number;
}

/** Taken, or which cap a delivery would pass (nothing is taken then). */
export type DailyVerdict = 'ok' | 'deliveries' | 'recipients';

/**
 * Schedules and their delivery attempts. Every adapter must guarantee:
 * - insert is atomic with its per-owner limit: two inserts racing at the limit never both succeed;
 * - a schedule of another owner is never listed by listByOwner;
 * - recordDelivery keeps the newest SCHEDULE_DELIVERIES_KEPT attempts per schedule;
 * - remove drops the schedule and its attempts; removing an unknown id answers false.
 */
export interface ScheduleStore {
  /** false when the owner already has `limit` schedules. */
  insert(schedule: ScheduleRecord, limit: number): Promise<boolean>;
  get(id: string): Promise<ScheduleRecord | null>;
  listByOwner(ownerId: string): Promise<ScheduleRecord[]>;
  stop(id: string, reason: string): Promise<void>;
  /** Keeps the matching set's digest of an alert just delivered; nothing for a removed schedule. */
  rememberAlert(id: string, digest: string): Promise<void>;
  remove(id: string): Promise<boolean>;
  recordDelivery(id: string, delivery: DeliveryRecord): Promise<void>;
  /** Newest first. */
  deliveries(id: string): Promise<DeliveryRecord[]>;
  /**
   * A runNow of this owner's report, at most one per `seconds`: null when claimed, else the seconds
   * until the next may run. Shared by every replica.
   */
  claimRunNow(ownerId: string, guid: string, seconds: number): Promise<number | null>;
  /** One delivery to `recipients` addresses (1 for a webhook) against the owner's caps for `day`. */
  takeDaily(ownerId: string, day: string, recipients: number, caps: DailyCaps): Promise<DailyVerdict>;
}

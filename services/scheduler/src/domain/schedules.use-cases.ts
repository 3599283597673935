import { randomBytes } from 'node:crypto';
import type {
  CompleteReportsSchedule,
  ReportsScheduleResult,
  ReportsSchedulesResult,
  ReportsUnscheduleResult,
} from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { DeliveryQueue } from '../ports/delivery-queue.port';
import type { Mailer } from '../ports/mailer.port';
import type { ReportRunner, ScheduleOwner } from '../ports/report-runner.port';
import type { DailyCaps, ScheduleRecord, ScheduleStore } from '../ports/schedule-store.port';
import type { WebhookSender } from '../ports/webhook-sender.port';
import { checkCron } from '@quarry/runtime';
import { noWebhookKey, webhookSecret } from './webhook-signature';

export interface ScheduleRules {
  minIntervalSeconds: number;
  /** Deliveries and e-mail recipients per owner and UTC day. */
  daily: DailyCaps;
  perUser: number;
  /** Absent when none is configured and the data directory cannot keep one: webhook schedules are refused. */
  webhookKey: Buffer | undefined;
}

export interface ScheduleDeps {
  store: ScheduleStore;
  queue: DeliveryQueue;
  runner: ReportRunner;
  webhooks: WebhookSender;
  mailer: Mailer;
  rules: ScheduleRules;
  now?: () => Date;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `sch_` and 22 base62 characters (131 bits): not guessable, so an id tells nothing about others. */
function newScheduleId(): string {
  const bytes = randomBytes(22);
  return `sch_${Array.from(bytes, (b) => ALPHABET[b % 62]).join('')}`;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * REPORTS.SCHEDULE, REPORTS.SCHEDULES and REPORTS.UNSCHEDULE. A schedule belongs to the user who made
 * it: another user's id answers exactly as an unknown one.
 */
export class SchedulesUseCases {
  private readonly now: () => Date;

  constructor(private readonly deps: ScheduleDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async schedule(owner: ScheduleOwner, p: CompleteReportsSchedule): Promise<ReportsScheduleResult> {
    const { store, queue, runner, webhooks, mailer, rules } = this.deps;
    if (!GUID.test(p.guid)) throw AppError.invalid('guid is not a valid report id');
    const guid = p.guid.toLowerCase();
    // The cheap refusals first (destination, report), then the cron, the one check that costs time.
    if ('webhook' in p.deliver) {
      if (!rules.webhookKey) throw noWebhookKey();
      await webhooks.vet(p.deliver.webhook.url);
    } else if (!mailer.configured)
      throw AppError.invalid('deliver.email: e-mail delivery is not configured on this server (QUARRY_SMTP_URL)');
    // The report exists, the owner may read it, and it has this format: checked now, and again each run.
    await runner.check(owner, guid, p.format, p.when);
    checkCron(p.cron, p.timeZone, rules.minIntervalSeconds, this.now());
    if ('email' in p.deliver && p.deliver.email.to.length > rules.daily.recipients)
      throw AppError.invalid(
        `deliver.email.to: ${p.deliver.email.to.length} addresses, more than one user may reach in a day (QUARRY_RECIPIENTS_PER_DAY is ${rules.daily.recipients})`,
      );
    // A runNow is a delivery like a timer's: scheduling, unscheduling and scheduling again must not
    // deliver one report faster than a cron may.
    if (p.runNow) {
      const wait = await store.claimRunNow(owner.userId, guid, rules.minIntervalSeconds);
      if (wait !== null)
        throw AppError.invalid(
          `runNow: this report was delivered at once for you less than ${rules.minIntervalSeconds} s ago (QUARRY_SCHEDULE_MIN_INTERVAL_S); the next may run in ${wait} s`,
        );
    }
    const record: ScheduleRecord = {
      id: newScheduleId(),
      ownerId: owner.userId,
      ownerName: owner.userName,
      tokenHash: owner.tokenHash,
      guid,
      cron: p.cron,
      timeZone: p.timeZone,
      format: p.format,
      deliver: p.deliver,
      status: 'active',
      stoppedReason: null,
      createdAt: this.now().toISOString(),
      ...(p.when ? { when: p.when } : {}),
    };
    if (!(await store.insert(record, rules.perUser)))
      throw AppError.invalid(
        `guid: you have ${rules.perUser} schedules already, the most one user may have (QUARRY_SCHEDULES_PER_USER); remove one with REPORTS.UNSCHEDULE`,
      );
    try {
      await queue.upsert(record.id, record.cron, record.timeZone);
      if (p.runNow) await queue.runNow(record.id);
    } catch (err) {
      // No timer, no schedule: the listing never shows one that will not run.
      await queue.remove(record.id).catch(() => undefined);
      await store.remove(record.id);
      throw err;
    }
    return {
      scheduleId: record.id,
      secret: 'webhook' in p.deliver && rules.webhookKey ? webhookSecret(rules.webhookKey, record.id) : null,
    };
  }

  async list(owner: ScheduleOwner, guid?: string): Promise<ReportsSchedulesResult> {
    const { store, queue } = this.deps;
    const wanted = guid?.trim().toLowerCase();
    const mine = (await store.listByOwner(owner.userId))
      .filter((s) => !wanted || s.guid === wanted)
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
    const schedules = await Promise.all(
      mine.map(async (s) => ({
        scheduleId: s.id,
        guid: s.guid,
        cron: s.cron,
        timeZone: s.timeZone,
        format: s.format,
        deliver: s.deliver,
        status: s.status,
        stoppedReason: s.stoppedReason,
        createdAt: s.createdAt,
        nextRunAt: s.status === 'active' ? await queue.nextRun(s.id) : null,
        deliveries: await store.deliveries(s.id),
        when: s.when ?? null,
      })),
    );
    return { schedules };
  }

  async unschedule(owner: ScheduleOwner, scheduleId: string): Promise<ReportsUnscheduleResult> {
    const { store, queue } = this.deps;
    const id = scheduleId.trim();
    const found = await store.get(id);
    if (!found || found.ownerId !== owner.userId) throw AppError.notFound(`Schedule ${id} not found`);
    await queue.remove(id);
    await store.remove(id);
    return { scheduleId: id, removed: true };
  }
}

import type { DeliveryRecord } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { DeliveryJob, DeliveryQueue } from '../ports/delivery-queue.port';
import type { Mailer } from '../ports/mailer.port';
import type { DeliveryAuditRecord, ReportOutput, ReportRunner } from '../ports/report-runner.port';
import type { DailyCaps, ScheduleRecord, ScheduleStore } from '../ports/schedule-store.port';
import type { WebhookSender } from '../ports/webhook-sender.port';
import { alertBody, alertText } from './alert-message';
import { reportFile } from './report-file';
import { legacySignatureHeader, noWebhookKey, standardWebhookHeaders } from './webhook-signature';

/**
 * What the worker does next: nothing (delivered, failed for good, stopped), try again later (a failed
 * try), or take the job up again shortly without counting a try (its owner's turn is not yet).
 */
export type DeliveryResult = { next: 'done' } | { next: 'retry'; detail: string } | { next: 'wait' };

/** Codes of a run that no retry can mend: the schedule stops, with the reason recorded. */
const STOPPING: Record<string, string> = {
  UNAUTHENTICATED: 'the owner can no longer run it',
  NOT_FOUND: 'the report was deleted or is no longer readable by its owner',
  FORBIDDEN: 'the owner’s token no longer has the scope it needs',
  INVALID_ARGUMENT: 'the report can no longer be delivered as asked',
};

export interface DeliverDeps {
  store: ScheduleStore;
  queue: DeliveryQueue;
  runner: ReportRunner;
  webhooks: WebhookSender;
  mailer: Mailer;
  webhookKey: Buffer | undefined;
  /** Deliveries and e-mail recipients per owner and UTC day. */
  daily: DailyCaps;
  log: Logger;
  now?: () => Date;
}

/** Where a schedule delivers, as the audit trail names it: never a URL's path or query, nor whole addresses. */
function destinationOf(schedule: ScheduleRecord): string {
  if ('webhook' in schedule.deliver) {
    try {
      return new URL(schedule.deliver.webhook.url).host;
    } catch {
      return '(invalid url)';
    }
  }
  const domains = new Set(schedule.deliver.email.to.map((a) => `@${a.slice(a.lastIndexOf('@') + 1)}`));
  return `mail ${[...domains].join(',')}`;
}

/**
 * One try of one scheduled run: run the report as its owner now, send it, record the attempt. At least
 * once: a worker that dies mid-way runs the job again, with the same Idempotency-Key for the receiver.
 */
export class DeliverReportUseCase {
  private readonly now: () => Date;
  /** Owners with a delivery under way here: one each at a time, so one owner's slow receivers hold one slot. */
  private readonly busyOwners = new Set<string>();

  constructor(private readonly deps: DeliverDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async deliver(job: DeliveryJob): Promise<DeliveryResult> {
    const schedule = await this.deps.store.get(job.scheduleId);
    // Removed or stopped since the timer fired: nothing to deliver, nothing to retry.
    if (!schedule || schedule.status !== 'active') return { next: 'done' };
    if (this.busyOwners.has(schedule.ownerId)) return { next: 'wait' };
    this.busyOwners.add(schedule.ownerId);
    try {
      return await this.deliverOne(schedule, job);
    } finally {
      this.busyOwners.delete(schedule.ownerId);
    }
  }

  private async deliverOne(schedule: ScheduleRecord, job: DeliveryJob): Promise<DeliveryResult> {
    const { store, runner, log } = this.deps;
    const runAt = new Date(job.runAt);
    const key = `${schedule.id}:${job.runAt}`;
    const started = performance.now();
    const owner = { userId: schedule.ownerId, userName: schedule.ownerName, tokenHash: schedule.tokenHash };
    let output: ReportOutput | undefined;
    const record = (
      outcome: DeliveryRecord['outcome'],
      httpStatus: number | null,
      detail: string,
      audited: DeliveryAuditRecord['outcome'] = outcome,
    ) => {
      // Every try is in the audit trail, beside the schedule's own list of its last attempts.
      runner.audit({
        scheduleId: schedule.id,
        owner,
        destination: destinationOf(schedule),
        version: output?.version ?? null,
        rows: output?.rows ?? null,
        outcome: audited,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      });
      return store.recordDelivery(schedule.id, {
        runAt: runAt.toISOString(),
        attempt: job.attempt,
        at: this.now().toISOString(),
        outcome,
        httpStatus,
        detail,
        idempotencyKey: key,
      });
    };
    const final = job.attempt >= job.maxAttempts;
    log.info(
      { scheduleId: schedule.id, runAt: runAt.toISOString(), attempt: job.attempt },
      'delivering a scheduled run',
    );
    const failed = async (httpStatus: number | null, detail: string, permanent: boolean): Promise<DeliveryResult> => {
      if (final || permanent) {
        await record('failed', httpStatus, detail);
        log.warn({ scheduleId: schedule.id, attempt: job.attempt, detail }, 'scheduled delivery failed');
        return { next: 'done' };
      }
      await record('retrying', httpStatus, detail);
      return { next: 'retry', detail };
    };

    let ran: ReportOutput;
    try {
      ran = await runner.run(owner, schedule.guid, schedule.format, schedule.when);
      output = ran;
    } catch (err) {
      const app = err instanceof AppError ? err : undefined;
      const why = app && STOPPING[app.code];
      if (why) {
        const reason = `${why}: ${app.detail}`;
        await store.stop(schedule.id, reason);
        await this.deps.queue.remove(schedule.id);
        await record('stopped', null, reason);
        log.info({ scheduleId: schedule.id, reason }, 'schedule stopped');
        return { next: 'done' };
      }
      return failed(
        null,
        `running the report failed: ${app?.detail ?? (err instanceof Error ? err.message : String(err))}`,
        false,
      );
    }

    // An alert that does not hold, or holds for the same matches as last delivered, sends nothing and
    // takes nothing from the daily caps.
    const quiet = this.quietAlert(schedule, ran);
    if (quiet) {
      await record('skipped', null, quiet);
      return { next: 'done' };
    }

    // Counted once per run, on its first try: a retry is the same delivery.
    if (job.attempt === 1) {
      const recipients = 'email' in schedule.deliver ? schedule.deliver.email.to.length : 1;
      const verdict = await store.takeDaily(
        schedule.ownerId,
        runAt.toISOString().slice(0, 10),
        recipients,
        this.deps.daily,
      );
      if (verdict !== 'ok') {
        const detail =
          verdict === 'deliveries'
            ? `not sent: the owner's ${this.deps.daily.deliveries} deliveries of the day are used (QUARRY_DELIVERIES_PER_DAY)`
            : `not sent: the owner's ${this.deps.daily.recipients} e-mail recipients of the day are used (QUARRY_RECIPIENTS_PER_DAY)`;
        await record('failed', null, detail, 'refused');
        log.warn({ scheduleId: schedule.id, detail }, 'scheduled delivery over the daily cap');
        return { next: 'done' };
      }
    }

    try {
      if ('webhook' in schedule.deliver) {
        const answer = await this.post(schedule, schedule.deliver.webhook.url, ran, runAt, key);
        if (!answer.ok) return failed(answer.status, answer.detail, answer.permanent);
        await record('delivered', answer.status, '');
      } else {
        const what = `Quarry's scheduled delivery of the report "${ran.name}" (version ${ran.version}), run at ${runAt.toISOString()}`;
        // Too large to attach: the signed link instead, which needs no sign-in and works until it expires.
        const body = ran.link
          ? `${what}, is ${ran.link.bytes} bytes, too large to attach. Download it until ${ran.link.expiresAt}:\n\n${ran.link.url}`
          : `${what}, is attached.`;
        const file = ran.link ? undefined : reportFile(ran, runAt);
        await this.deps.mailer.send({
          to: schedule.deliver.email.to,
          subject: `${ran.name} (${runAt.toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
          text: `${body}\n\n${ran.alert ? alertText(ran.alert) : ''}Schedule ${schedule.id}.`,
          messageId: `<${key.replace(':', '.')}@quarry>`,
          headers: { 'Idempotency-Key': key, 'X-Quarry-Schedule-Id': schedule.id },
          ...(file
            ? { attachment: { filename: file.filename, contentType: ran.contentType, content: file.content } }
            : {}),
        });
        await record('delivered', null, '');
      }
      if (ran.alert) await store.rememberAlert(schedule.id, ran.alert.digest);
    } catch (err) {
      return failed(
        null,
        err instanceof AppError ? err.detail : err instanceof Error ? err.message : String(err),
        false,
      );
    }
    return { next: 'done' };
  }

  /** Why an alert's run sends nothing, or undefined when it delivers. */
  private quietAlert(schedule: ScheduleRecord, ran: ReportOutput): string | undefined {
    const alert = ran.alert;
    if (!alert) return undefined;
    const condition = `${alert.total} ${alert.op} ${alert.value} on ${alert.on === 'grandTotal' ? 'the grand total' : 'any row'}`;
    if (!alert.holds) return `not sent: the alert's condition (${condition}) did not hold`;
    if (schedule.when?.onlyOnChange && schedule.lastAlert === alert.digest)
      return `not sent: the alert's matches (${condition}) are the same as at the last delivery`;
    return undefined;
  }

  private post(schedule: ScheduleRecord, url: string, output: ReportOutput, runAt: Date, key: string) {
    const body = JSON.stringify({
      scheduleId: schedule.id,
      guid: schedule.guid,
      version: output.version,
      runAt: runAt.toISOString(),
      contentType: output.contentType,
      // Too large to carry: where to download it instead (no bearer token; it expires).
      ...(output.link ? { link: output.link } : { data: output.data }),
      ...(output.alert ? { alert: alertBody(output.alert) } : {}),
    });
    const t = Math.floor(this.now().getTime() / 1000);
    const webhookKey = this.deps.webhookKey;
    if (!webhookKey) throw noWebhookKey();
    return this.deps.webhooks.send(url, body, {
      'Content-Type': 'application/json',
      // The run's key is the message id: the same on every try, so a receiver drops a repeat.
      ...standardWebhookHeaders(webhookKey, schedule.id, key, t, body),
      'Quarry-Signature': legacySignatureHeader(webhookKey, schedule.id, t, body),
      'Idempotency-Key': key,
      'User-Agent': 'Quarry-Webhook/1',
    });
  }
}

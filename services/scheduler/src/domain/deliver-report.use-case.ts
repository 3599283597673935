import type { DeliveryRecord } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { DeliveryJob, DeliveryQueue } from '../ports/delivery-queue.port';
import type { Mailer } from '../ports/mailer.port';
import type { ReportOutput, ReportRunner } from '../ports/report-runner.port';
import type { ScheduleRecord, ScheduleStore } from '../ports/schedule-store.port';
import type { WebhookSender } from '../ports/webhook-sender.port';
import { reportFile } from './report-file';
import { noWebhookKey, signatureHeader, webhookSecret } from './webhook-signature';

/** What the worker does next: nothing (delivered, failed for good, stopped), or try again later. */
export type DeliveryResult = { next: 'done' } | { next: 'retry'; detail: string };

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
  log: Logger;
  now?: () => Date;
}

/**
 * One try of one scheduled run: run the report as its owner now, send it, record the attempt. At least
 * once: a worker that dies mid-way runs the job again, with the same Idempotency-Key for the receiver.
 */
export class DeliverReportUseCase {
  private readonly now: () => Date;

  constructor(private readonly deps: DeliverDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async deliver(job: DeliveryJob): Promise<DeliveryResult> {
    const { store, runner, log } = this.deps;
    const schedule = await store.get(job.scheduleId);
    // Removed or stopped since the timer fired: nothing to deliver, nothing to retry.
    if (!schedule || schedule.status !== 'active') return { next: 'done' };
    const runAt = new Date(job.runAt);
    const key = `${schedule.id}:${job.runAt}`;
    const record = (outcome: DeliveryRecord['outcome'], httpStatus: number | null, detail: string) =>
      store.recordDelivery(schedule.id, {
        runAt: runAt.toISOString(),
        attempt: job.attempt,
        at: this.now().toISOString(),
        outcome,
        httpStatus,
        detail,
        idempotencyKey: key,
      });
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

    let output: ReportOutput;
    try {
      output = await runner.run(
        { userId: schedule.ownerId, userName: schedule.ownerName, tokenHash: schedule.tokenHash },
        schedule.guid,
        schedule.format,
      );
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

    try {
      if ('webhook' in schedule.deliver) {
        const answer = await this.post(schedule, schedule.deliver.webhook.url, output, runAt, key);
        if (!answer.ok) return failed(answer.status, answer.detail, answer.permanent);
        await record('delivered', answer.status, '');
      } else {
        const file = reportFile(output, runAt);
        await this.deps.mailer.send({
          to: schedule.deliver.email.to,
          subject: `${output.name} (${runAt.toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
          text: `Quarry's scheduled delivery of the report "${output.name}" (version ${output.version}), run at ${runAt.toISOString()}, is attached.\n\nSchedule ${schedule.id}.`,
          messageId: `<${key.replace(':', '.')}@quarry>`,
          headers: { 'Idempotency-Key': key, 'X-Quarry-Schedule-Id': schedule.id },
          attachment: { filename: file.filename, contentType: output.contentType, content: file.content },
        });
        await record('delivered', null, '');
      }
    } catch (err) {
      return failed(
        null,
        err instanceof AppError ? err.detail : err instanceof Error ? err.message : String(err),
        false,
      );
    }
    return { next: 'done' };
  }

  private post(schedule: ScheduleRecord, url: string, output: ReportOutput, runAt: Date, key: string) {
    const body = JSON.stringify({
      scheduleId: schedule.id,
      guid: schedule.guid,
      version: output.version,
      runAt: runAt.toISOString(),
      contentType: output.contentType,
      data: output.data,
    });
    const t = Math.floor(this.now().getTime() / 1000);
    const webhookKey = this.deps.webhookKey;
    if (!webhookKey) throw noWebhookKey();
    return this.deps.webhooks.send(url, body, {
      'Content-Type': 'application/json',
      'Quarry-Signature': signatureHeader(webhookSecret(webhookKey, schedule.id), t, body),
      'Idempotency-Key': key,
      'User-Agent': 'Quarry-Webhook/1',
    });
  }
}

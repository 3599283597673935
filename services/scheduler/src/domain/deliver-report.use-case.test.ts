import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import type { DeliveryQueue } from '../ports/delivery-queue.port';
import type { Mailer } from '../ports/mailer.port';
import type { ReportRunner } from '../ports/report-runner.port';
import type { DeliveryRecord, ScheduleRecord, ScheduleStore } from '../ports/schedule-store.port';
import type { WebhookAnswer, WebhookSender } from '../ports/webhook-sender.port';
import { DeliverReportUseCase } from './deliver-report.use-case';
import { webhookSecret } from './webhook-signature';

const key = Buffer.from('k'.repeat(32));
const schedule: ScheduleRecord = {
  id: 'sch_1',
  ownerId: 'u1',
  ownerName: 'ann',
  tokenHash: 'h',
  guid: 'g',
  cron: '0 8 * * 1',
  timeZone: 'UTC',
  format: 'csv',
  deliver: { webhook: { url: 'https://hooks.example.com/q' } },
  status: 'active',
  stoppedReason: null,
  createdAt: '2026-01-01T00:00:00.000Z',
};

function setup(
  run: ReportRunner['run'],
  answers: WebhookAnswer[],
  mailer: Mailer = { configured: false, send: async () => undefined },
  deliver: ScheduleRecord['deliver'] = schedule.deliver,
) {
  let current: ScheduleRecord | null = { ...schedule, deliver };
  const records: DeliveryRecord[] = [];
  const sent: Array<{ body: string; headers: Record<string, string> }> = [];
  const removed: string[] = [];
  const store = {
    get: async () => current,
    stop: async (_id: string, reason: string) => {
      current = current && { ...current, status: 'stopped', stoppedReason: reason };
    },
    recordDelivery: async (_id: string, d: DeliveryRecord) => void records.unshift(d),
    takeDaily: async () => 'ok',
  } as unknown as ScheduleStore;
  const webhooks: WebhookSender = {
    vet: async () => undefined,
    send: async (_url, body, headers) => {
      sent.push({ body, headers });
      return answers.shift() ?? { ok: true, status: 200 };
    },
  };
  const queue = { remove: async (id: string) => void removed.push(id) } as unknown as DeliveryQueue;
  const useCase = new DeliverReportUseCase({
    store,
    queue,
    runner: { check: async () => undefined, run, audit: () => undefined },
    webhooks,
    mailer,
    webhookKey: key,
    daily: { deliveries: 100, recipients: 100 },
    log: silentLogger(),
    now: () => new Date('2026-03-30T08:00:01Z'),
  });
  return { useCase, records, sent, removed, current: () => current };
}

const output = async () => ({ name: 'R', version: 3, contentType: 'text/csv', rows: 1, data: 'a,b\r\n' });
const job = (attempt: number) => ({
  scheduleId: 'sch_1',
  runAt: Date.parse('2026-03-30T08:00:00Z'),
  attempt,
  maxAttempts: 5,
});

describe('DeliverReportUseCase', () => {
  it('signs the body with the schedule secret and keys it by run, the same on every try', async () => {
    const s = setup(output, [{ ok: false, status: 502, detail: 'HTTP 502', permanent: false }]);
    expect(await s.useCase.deliver(job(1))).toEqual({ next: 'retry', detail: 'HTTP 502' });
    expect(await s.useCase.deliver(job(2))).toEqual({ next: 'done' });
    const [a, b] = s.sent;
    expect(a.headers['Idempotency-Key']).toBe(`sch_1:${job(1).runAt}`);
    expect(b.headers['Idempotency-Key']).toBe(a.headers['Idempotency-Key']);
    // Standard Webhooks, verified by its own library with the secret REPORTS.SCHEDULE showed.
    const secret = webhookSecret(key, 'sch_1');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The library checks the timestamp against its clock: this test's clock is the use case's.
    jest.spyOn(Date, 'now').mockReturnValue(Number(a.headers['webhook-timestamp']) * 1000);
    expect(new Webhook(secret).verify(a.body, a.headers)).toEqual(JSON.parse(a.body));
    expect(a.headers['webhook-id']).toBe(a.headers['Idempotency-Key']);
    expect(b.headers['webhook-id']).toBe(a.headers['webhook-id']);
    expect(() => new Webhook(secret).verify(`${a.body} `, a.headers)).toThrow();
    jest.restoreAllMocks();
    // The deprecated Quarry-Signature, keyed by the secret as older schedules were shown it (base64url).
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(a.headers['Quarry-Signature'])!;
    const legacy = `whsec_${Buffer.from(secret.slice(6), 'base64').toString('base64url')}`;
    expect(createHmac('sha256', legacy).update(`${t}.${a.body}`).digest('hex')).toBe(v1);
    expect(JSON.parse(a.body)).toEqual({
      scheduleId: 'sch_1',
      guid: 'g',
      version: 3,
      runAt: '2026-03-30T08:00:00.000Z',
      contentType: 'text/csv',
      data: 'a,b\r\n',
    });
    expect(s.records.map((r) => [r.attempt, r.outcome])).toEqual([
      [2, 'delivered'],
      [1, 'retrying'],
    ]);
  });

  it('records the last try as failed, and a permanent refusal as failed at once', async () => {
    const down = { ok: false as const, status: 503, detail: 'HTTP 503', permanent: false };
    const s = setup(output, [down]);
    expect(await s.useCase.deliver(job(5))).toEqual({ next: 'done' });
    expect(s.records[0]).toMatchObject({ attempt: 5, outcome: 'failed', httpStatus: 503 });
    const r = setup(output, [{ ok: false, status: 302, detail: 'redirected', permanent: true }]);
    expect(await r.useCase.deliver(job(1))).toEqual({ next: 'done' });
    expect(r.records[0]).toMatchObject({ attempt: 1, outcome: 'failed', detail: 'redirected' });
  });

  it.each([
    ['UNAUTHENTICATED', 'Token revoked', /^the owner can no longer run it: Token revoked$/],
    ['NOT_FOUND', 'Report g not found', /^the report was deleted or is no longer readable/],
    ['FORBIDDEN', 'Token lacks the required scope', /^the owner’s token no longer has the scope/],
  ] as const)(
    'stops the schedule when the run answers %s, with the reason, and drops its timer',
    async (code, d, why) => {
      const s = setup(async () => {
        throw new AppError(code, d);
      }, []);
      expect(await s.useCase.deliver(job(1))).toEqual({ next: 'done' });
      expect(s.current()).toMatchObject({ status: 'stopped', stoppedReason: expect.stringMatching(why) });
      expect(s.records[0]).toMatchObject({ outcome: 'stopped' });
      expect(s.removed).toEqual(['sch_1']);
      expect(s.sent).toEqual([]);
    },
  );

  it('retries a run that failed for a passing reason (a service unreachable)', async () => {
    const s = setup(async () => {
      throw AppError.unavailable('crosstab unreachable');
    }, []);
    expect(await s.useCase.deliver(job(1))).toEqual({
      next: 'retry',
      detail: 'running the report failed: crosstab unreachable',
    });
    expect(s.current()?.status).toBe('active');
  });
});

describe('DeliverReportUseCase with an output sent as a link', () => {
  const link = {
    url: 'https://quarry.example.com/exports/signed/abc.def',
    expiresAt: '2026-04-06T08:00:01.000Z',
    bytes: 12_345_678,
  };
  const linked = async () => ({ name: 'Big', version: 2, contentType: 'text/csv', rows: 9, data: null, link });

  it('a webhook carries the link in place of the data', async () => {
    const s = setup(linked, []);
    expect(await s.useCase.deliver(job(1))).toEqual({ next: 'done' });
    const body = JSON.parse(s.sent[0].body) as Record<string, unknown>;
    expect(body).toMatchObject({ contentType: 'text/csv', link });
    expect(body).not.toHaveProperty('data');
  });

  it('an e-mail has the link in its text and nothing attached', async () => {
    const mails: Array<Parameters<Mailer['send']>[0]> = [];
    const mailer: Mailer = { configured: true, send: async (m) => void mails.push(m) };
    const s = setup(linked, [], mailer, { email: { to: ['ann@example.com'] } });
    expect(await s.useCase.deliver(job(1))).toEqual({ next: 'done' });
    expect(mails).toHaveLength(1);
    expect(mails[0].attachment).toBeUndefined();
    expect(mails[0].text).toContain(
      `is ${link.bytes} bytes, too large to attach. Download it until ${link.expiresAt}:\n\n${link.url}`,
    );
  });
});

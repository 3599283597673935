import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { METHODS } from '@quarry/contract';
import { createIdentity, type Identity } from './support/identities';
import { startQuarry, type RunningQuarry } from './support/quarry-process';
import { startStackWithData, typedCall, type Stack } from './support/stack';
import { launchBrowser } from './support/browser';
import { eventually } from './support/eventually';
import { mimeParts, Receiver, startSmtp, type Received } from './support/deliveries';

/*
 * Scheduled deliveries end to end: the real server, a real HTTP receiver that checks
 * every signature, a real SMTP server (smtp-server), and the server killed and restarted on its data.
 */

const SHOTS = path.join(__dirname, '..', 'test-output', 'console');

interface Delivery {
  runAt: string;
  attempt: number;
  at: string;
  outcome: 'delivered' | 'retrying' | 'failed' | 'stopped';
  httpStatus: number | null;
  detail: string;
  idempotencyKey: string;
}
interface Schedule {
  scheduleId: string;
  guid: string;
  cron: string;
  timeZone: string;
  format: string;
  status: 'active' | 'stopped';
  stoppedReason: string | null;
  nextRunAt: string | null;
  deliveries: Delivery[];
}

/**
 * Verifies a delivery as a receiver would: with the standardwebhooks library and the secret shown at
 * creation; and the deprecated Quarry-Signature (HMAC-SHA256 of "<t>.<body>", keyed by the secret in the
 * base64url spelling older schedules were shown).
 */
function signatureValid(r: Received, secret: string): boolean {
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
  try {
    new Webhook(secret).verify(r.body, headers);
  } catch {
    return false;
  }
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['quarry-signature'] ?? ''));
  if (!m || m[1] !== headers['webhook-timestamp']) return false;
  const legacy = `whsec_${Buffer.from(secret.slice('whsec_'.length), 'base64').toString('base64url')}`;
  return createHmac('sha256', legacy).update(`${m[1]}.${r.body}`).digest('hex') === m[2];
}

describe('scheduled deliveries (REPORTS.SCHEDULE, REPORTS.SCHEDULES, REPORTS.UNSCHEDULE)', () => {
  let stack: Stack;
  let quarry: RunningQuarry;
  let ann: Identity;
  let bob: Identity;
  const receiver = new Receiver();
  const elsewhere = new Receiver();
  let port: number;
  let otherPort: number;
  const mails: Array<{ to: string[]; raw: string }> = [];
  let smtp: SMTPServer;
  let env: Record<string, string>;
  let sharedGuid: string;
  let privateGuid: string;
  const crosstab = {
    index: 'movies',
    query: '(Major Genre):Drama',
    rows: ['MPAA Rating'],
    columns: [],
    totals: [{ aggregationType: 'Count' }],
  };

  beforeAll(async () => {
    port = await receiver.start();
    otherPort = await elsewhere.start();
    const started = await startSmtp(mails);
    smtp = started.server;
    const smtpPort = started.port;
    env = {
      QUARRY_SCHEDULE_MIN_INTERVAL_S: '2',
      QUARRY_SCHEDULES_PER_USER: '6',
      // The receiver is named exactly (so its loopback address is allowed); `*` admits public hosts only.
      QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${port},*`,
      QUARRY_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      QUARRY_SMTP_FROM: 'Quarry <reports@quarry.test>',
      QUARRY_DELIVERY_BACKOFF_MS: '200',
    };
    stack = await startStackWithData({ env });
    quarry = stack.quarry;
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: '*' });
    bob = await createIdentity(stack.dataDir, 'bob', { indexes: '*' });
    const shared = await stack.call<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...crosstab,
      format: 'csv',
      saveReport: { name: 'Dramas by rating', shared: true },
    });
    sharedGuid = shared.data!.report.guid;
    const mine = await stack.call<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...crosstab,
      chartType: 'Pie2D',
      saveReport: { name: 'Dramas pie' },
    });
    privateGuid = mine.data!.report.guid;
  }, 180000);

  afterAll(async () => {
    await quarry?.stop();
    await receiver.stop();
    await elsewhere.stop();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  // On whichever server runs now (the last tests restart it).
  const call = typedCall(() => quarry.baseUrl);
  const schedule = async (who: Identity, params: Record<string, unknown>) => {
    for (;;) {
      const res = await call<{ scheduleId: string; secret: string | null }>(who, 'REPORTS.SCHEDULE', {
        guid: sharedGuid,
        cron: '0 8 1 1 *',
        format: 'json',
        ...params,
      });
      // runNow of one report by one user comes at most every QUARRY_SCHEDULE_MIN_INTERVAL_S (2 s here):
      // these tests want each of theirs delivered, so they wait their turn.
      if (!res.error?.data.detail.startsWith('runNow:')) return res;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const webhook = (path: string) => ({ webhook: { url: `http://127.0.0.1:${port}${path}` } });
  const listOf = async (who: Identity, guid?: string) =>
    (await call<{ schedules: Schedule[] }>(who, 'REPORTS.SCHEDULES', guid ? { guid } : {})).data!.schedules;
  const find = async (who: Identity, id: string) => (await listOf(who)).find((s) => s.scheduleId === id);

  it('refuses bad input with a 400 naming the parameter', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ cron: 'every monday' }, /^cron must have 5 fields/],
      [{ cron: '61 * * * *' }, /^cron "61 \* \* \* \*" does not parse/],
      [{ cron: '* * * * * *' }, /^cron .* runs 1 s apart .* at most every 2 s \(QUARRY_SCHEDULE_MIN_INTERVAL_S\)/],
      [{ timeZone: 'Mars/Olympus' }, /^timeZone "Mars\/Olympus" is not a known IANA time zone/],
      [{ format: 'tiff' }, /^format must be one of/],
      [{ format: 'parquet' }, /^format: parquet is for search reports/],
      [{ format: 'png' }, /^format: png needs a report saved as a chart/],
      [
        { deliver: { webhook: { url: `http://user:pw@127.0.0.1:${port}/x` } } },
        /^deliver\.webhook\.url must not carry credentials/,
      ],
      [
        { deliver: { webhook: { url: 'ftp://127.0.0.1/x' } } },
        /^deliver\.webhook\.url must be an http or https URL, got scheme "ftp"/,
      ],
      [{ deliver: { webhook: { url: 'file:///etc/passwd' } } }, /^deliver\.webhook\.url must be an http or https URL/],
      [
        { deliver: { email: { to: Array.from({ length: 21 }, (_, i) => `u${i}@example.com`) } } },
        /^deliver\.email\.to may have at most 20 addresses/,
      ],
      [
        { deliver: { email: { to: ['ok@example.com', 'not an address'] } } },
        /^deliver\.email\.to\[1\] is not an e-mail address: "not an address"/,
      ],
      [{ deliver: { sms: { to: '+1' } } }, /^Unknown parameter in deliver: "sms"/],
      [{ deliver: {} }, /^deliver must be \{webhook: \{url\}\} or \{email: \{to: \[\.\.\.\]\}\}/],
      [{ deliver: webhook('/x'), guid: '00000000-0000-4000-8000-000000000000' }, /^Report .* not found/],
    ];
    for (const [params, detail] of cases) {
      const res = await schedule(ann, { deliver: webhook('/bad'), ...params });
      expect({ params, error: res.error?.data.detail }).toEqual({ params, error: expect.stringMatching(detail) });
    }
    expect(receiver.at('/bad')).toHaveLength(0);
    expect(await listOf(ann)).toEqual([]);
  });

  it('refuses webhooks aimed at the metadata address, at loopback not named, or outside the allow list', async () => {
    const refused: Array<[string, RegExp]> = [
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
      // `*` admits ports 80 and 443 only: on those, loopback and private addresses are still refused.
      ['http://127.0.0.1/x', /127\.0\.0\.1 is a loopback address/],
      [`http://127.0.0.1:${otherPort}/x`, /127\.0\.0\.1:\d+ does not match QUARRY_WEBHOOK_ALLOW/],
      ['http://localhost/x', /localhost resolves to a loopback address/],
      ['http://[::ffff:10.0.0.1]/x', /a private address/],
      ['http://10.1.2.3/x', /10\.1\.2\.3 is a private address/],
      ['https://192.168.1.1/x', /a private address/],
      ['http://192.168.1.1:8080/x', /does not match QUARRY_WEBHOOK_ALLOW/],
    ];
    for (const [url, detail] of refused) {
      const res = await schedule(ann, { deliver: { webhook: { url } } });
      expect({ url, code: res.error?.code, detail: res.error?.data.detail }).toEqual({
        url,
        code: 400,
        detail: expect.stringMatching(new RegExp(`^deliver\\.webhook\\.url: .*${detail.source}`)),
      });
    }
    expect(elsewhere.got).toHaveLength(0);
  });

  it('delivers a signed webhook at once (runNow), lists the attempt, and only the owner sees or removes it', async () => {
    const made = await schedule(ann, {
      deliver: webhook('/signed'),
      format: 'csv',
      runNow: true,
      timeZone: 'Europe/Paris',
    });
    expect(made.error).toBeUndefined();
    const { scheduleId, secret } = made.data!;
    expect(scheduleId).toMatch(/^sch_[0-9A-Za-z]{22}$/);
    expect(secret).toMatch(/^whsec_/);
    const [got] = await eventually('the webhook', async () =>
      receiver.at('/signed').length ? receiver.at('/signed') : undefined,
    );
    expect(signatureValid(got, secret!)).toBe(true);
    expect(signatureValid(got, `${secret!}x`)).toBe(false);
    const body = JSON.parse(got.body) as Record<string, unknown>;
    const expected = await call<{ data: string }>(ann, 'CROSSTAB.EXECUTE', { ...crosstab, format: 'csv' });
    expect(body).toEqual({
      scheduleId,
      guid: sharedGuid,
      version: 1,
      runAt: expect.stringMatching(/^\d{4}-.*Z$/),
      contentType: 'text/csv',
      data: expected.data!.data,
    });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['idempotency-key']).toBe(`${scheduleId}:${Date.parse(String(body.runAt))}`);

    const listed = await eventually('the recorded delivery', async () => {
      const s = await find(ann, scheduleId);
      return s?.deliveries.length ? s : undefined;
    });
    expect(listed).toMatchObject({
      guid: sharedGuid,
      cron: '0 8 1 1 *',
      timeZone: 'Europe/Paris',
      format: 'csv',
      status: 'active',
      stoppedReason: null,
      nextRunAt: expect.stringMatching(/^\d{4}-01-01T07:00:00/),
    });
    expect(listed.deliveries).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'delivered',
        httpStatus: 200,
        idempotencyKey: got.headers['idempotency-key'],
      }),
    ]);
    expect(await listOf(ann, privateGuid)).toEqual([]);
    // Every answer is what the contract (and so the OpenRPC document) says it is.
    expect(METHODS['REPORTS.SCHEDULE'].result.safeParse(made.data).error).toBeUndefined();
    expect(METHODS['REPORTS.SCHEDULES'].result.safeParse({ schedules: await listOf(ann) }).error).toBeUndefined();

    // Bob neither sees nor removes it: his call answers as for an unknown id.
    expect(await listOf(bob)).toEqual([]);
    const theirs = await call(bob, 'REPORTS.UNSCHEDULE', { scheduleId });
    const unknown = await call(bob, 'REPORTS.UNSCHEDULE', { scheduleId: 'sch_0000000000000000000000' });
    expect(theirs.error?.code).toBe(404);
    expect(theirs.error!.data.detail.replace(scheduleId, 'ID')).toBe(
      unknown.error!.data.detail.replace('sch_0000000000000000000000', 'ID'),
    );
    // Bob may schedule the shared report, but not Ann's private one.
    expect((await schedule(bob, { guid: privateGuid, deliver: webhook('/bob') })).error?.code).toBe(404);
    const bobs = await schedule(bob, { deliver: webhook('/bob') });
    expect(bobs.data?.scheduleId).toMatch(/^sch_/);
    expect((await call(bob, 'REPORTS.UNSCHEDULE', { scheduleId: bobs.data!.scheduleId })).data).toEqual({
      scheduleId: bobs.data!.scheduleId,
      removed: true,
    });

    expect((await call(ann, 'REPORTS.UNSCHEDULE', { scheduleId })).data).toEqual({ scheduleId, removed: true });
    expect(await find(ann, scheduleId)).toBeUndefined();
    expect((await call(ann, 'REPORTS.UNSCHEDULE', { scheduleId })).error?.code).toBe(404);
  });

  it('retries with backoff (each try recorded, one key), then records the run as failed after 5 tries', async () => {
    receiver.answer = (r, n) => (r.path === '/flaky' && n <= 2 ? 500 : r.path === '/down' ? 503 : 200);
    const flaky = (await schedule(ann, { deliver: webhook('/flaky'), runNow: true })).data!;
    const down = (await schedule(ann, { deliver: webhook('/down'), runNow: true })).data!;
    const ok = await eventually('the third try', async () => {
      const s = await find(ann, flaky.scheduleId);
      return s?.deliveries[0]?.outcome === 'delivered' ? s : undefined;
    });
    expect(ok.deliveries.map((d) => [d.attempt, d.outcome, d.httpStatus])).toEqual([
      [3, 'delivered', 200],
      [2, 'retrying', 500],
      [1, 'retrying', 500],
    ]);
    expect(new Set(receiver.at('/flaky').map((r) => r.headers['idempotency-key'])).size).toBe(1);
    const failed = await eventually('the fifth try', async () => {
      const s = await find(ann, down.scheduleId);
      return s?.deliveries[0]?.outcome === 'failed' ? s : undefined;
    });
    expect(failed.deliveries.map((d) => d.outcome)).toEqual(['failed', 'retrying', 'retrying', 'retrying', 'retrying']);
    expect(failed.deliveries[0]).toMatchObject({
      attempt: 5,
      httpStatus: 503,
      detail: 'the receiver answered HTTP 503',
    });
    const times = receiver.at('/down').map((r) => Number(/t=(\d+)/.exec(String(r.headers['quarry-signature']))![1]));
    expect(times).toHaveLength(5);
    receiver.answer = () => 200;
  });

  it('does not follow a redirect: the run fails at once and the other host is never called', async () => {
    receiver.answer = (r) => (r.path === '/moved' ? 302 : 200);
    const made = (await schedule(ann, { deliver: webhook('/moved'), runNow: true })).data!;
    const s = await eventually('the refused redirect', async () => {
      const x = await find(ann, made.scheduleId);
      return x?.deliveries.length ? x : undefined;
    });
    expect(s.deliveries).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'failed',
        httpStatus: 302,
        detail: 'the receiver redirected to "http://169.254.169.254/latest/meta-data/"; redirects are not followed',
      }),
    ]);
    expect(receiver.at('/moved')).toHaveLength(1);
    receiver.answer = () => 200;
  });

  it('e-mails the output as an attachment, byte for byte', async () => {
    const made = await schedule(ann, {
      format: 'csv',
      deliver: { email: { to: ['ann@example.com', 'team@example.com'] } },
      runNow: true,
    });
    expect(made.data?.secret).toBeNull();
    const mail = await eventually('the e-mail', async () => mails[0]);
    expect(mail.to).toEqual(['ann@example.com', 'team@example.com']);
    expect(mail.raw).toMatch(/^From: Quarry <reports@quarry\.test>/m);
    expect(mail.raw).toMatch(/^Subject: Dramas by rating \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)/m);
    expect(mail.raw).toMatch(new RegExp(`^Idempotency-Key: ${made.data!.scheduleId}:\\d+`, 'm'));
    const attachment = mimeParts(mail.raw).find((p) => /Content-Disposition: attachment/i.test(p.headers))!;
    expect(attachment.headers).toMatch(/Content-Type: text\/csv/i);
    expect(attachment.headers).toMatch(/filename=Dramas-by-rating-\d{4}-\d\d-\d\d-\d\d-\d\d\.csv/);
    expect(attachment.headers).toMatch(/Content-Transfer-Encoding: base64/i);
    const bytes = Buffer.from(attachment.body.replace(/\s+/g, ''), 'base64');
    const direct = await call<{ data: string }>(ann, 'CROSSTAB.EXECUTE', { ...crosstab, format: 'csv' });
    expect(bytes.equals(Buffer.from(direct.data!.data, 'utf8'))).toBe(true);
    const listed = await eventually('the recorded e-mail', async () => {
      const s = await find(ann, made.data!.scheduleId);
      return s?.deliveries.length ? s : undefined;
    });
    expect(listed.deliveries[0]).toMatchObject({ outcome: 'delivered', httpStatus: null, detail: '' });
  });

  it('enforces QUARRY_SCHEDULES_PER_USER', async () => {
    const have = (await listOf(ann)).length;
    for (let i = have; i < 6; i++) expect((await schedule(ann, { deliver: webhook('/limit') })).error).toBeUndefined();
    const over = await schedule(ann, { deliver: webhook('/limit') });
    expect(over.error?.code).toBe(400);
    expect(over.error?.data.detail).toMatch(/^guid: you have 6 schedules already.*QUARRY_SCHEDULES_PER_USER/);
    for (const s of (await listOf(ann)).filter((x) => x.deliveries.length === 0))
      await call(ann, 'REPORTS.UNSCHEDULE', { scheduleId: s.scheduleId });
  });

  it('stops a schedule whose token is revoked, whose owner is removed, whose report is deleted or made unreadable (its index dropped), saying why', async () => {
    const carol = await createIdentity(stack.dataDir, 'carol', { indexes: '*' });
    const erin = await createIdentity(stack.dataDir, 'erin', { indexes: '*' });
    const doomed = await call<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      ...crosstab,
      format: 'html',
      saveReport: { name: 'Soon deleted' },
    });
    const onFlights = await call<{ report: { guid: string } }>(ann, 'CROSSTAB.EXECUTE', {
      index: 'flights',
      rows: ['origin'],
      columns: [],
      totals: [{ aggregationType: 'Count' }],
      saveReport: { name: 'Flights by origin' },
    });
    const every2s = { cron: '*/2 * * * * *', format: 'html' };
    const a = (await schedule(carol, { ...every2s, deliver: webhook('/carol') })).data!;
    const b = (await schedule(erin, { ...every2s, deliver: webhook('/erin') })).data!;
    const c = (await schedule(ann, { ...every2s, guid: doomed.data!.report.guid, deliver: webhook('/doomed') })).data!;
    const d = (await schedule(ann, { ...every2s, guid: onFlights.data!.report.guid, deliver: webhook('/flights') }))
      .data!;
    await eventually('the first runs', async () =>
      ['/carol', '/erin', '/doomed', '/flights'].every((p) => receiver.at(p).length > 0) ? true : undefined,
    );
    expect((await stack.cli(['token', 'revoke', carol.tokenId])).code).toBe(0);
    expect((await stack.cli(['user', 'delete', 'erin'])).code).toBe(0);
    expect((await stack.cli(['report', 'delete', doomed.data!.report.guid])).code).toBe(0);
    // The index dropped: the report is still there, but nobody can read what it runs on.
    expect((await stack.cli(['index', 'drop', 'flights'])).code).toBe(0);
    const stopped = async (who: Identity, id: string) =>
      eventually(`${id} stopped`, async () => {
        const s = await find(who, id);
        return s?.status === 'stopped' ? s : undefined;
      });
    const byAnn = await stopped(ann, c.scheduleId);
    expect(byAnn.stoppedReason).toMatch(
      /^the report was deleted or is no longer readable by its owner: Report .* not found/,
    );
    expect(byAnn.nextRunAt).toBeNull();
    expect(byAnn.deliveries[0]).toMatchObject({ outcome: 'stopped', detail: byAnn.stoppedReason });
    const unreadable = await stopped(ann, d.scheduleId);
    expect(unreadable.stoppedReason).toMatch(
      /^the report was deleted or is no longer readable by its owner: .*flights/,
    );
    // Carol's and Erin's tokens no longer list anything; their schedules' timers are gone all the same.
    const settled = receiver.got.length;
    await new Promise((r) => setTimeout(r, 4500));
    const late = receiver.got.slice(settled).filter((g) => ['/carol', '/erin', '/doomed', '/flights'].includes(g.path));
    expect(late).toEqual([]);
    expect((await call(carol, 'REPORTS.SCHEDULES', {})).error?.code).toBe(401);
    void a;
    void b;
    // A hang guard: four CLI processes and several runs waited for, on a loaded machine.
  }, 180_000);

  it('the console creates a schedule for a report, shows the secret once and the last delivery, and removes it', async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(String(err)));
      await page.goto(`${quarry.baseUrl}/console`, { waitUntil: 'networkidle0' });
      const gina = await createIdentity(stack.dataDir, 'gina', { indexes: '*' });
      await page.type('#token', gina.token);
      await page.click('#token-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#index-list .card').length > 0);
      await page.click('#tab-schedules');
      await page.waitForFunction(
        (guid) =>
          Array.from(document.querySelectorAll('#schedule-report option')).some(
            (o) => (o as HTMLOptionElement).value === guid,
          ),
        {},
        sharedGuid,
      );
      await page.select('#schedule-report', sharedGuid);
      await page.$eval('#schedule-cron', (e) => ((e as HTMLInputElement).value = '0 7 * * 1-5'));
      await page.$eval('#schedule-tz', (e) => ((e as HTMLInputElement).value = 'Europe/Paris'));
      await page.select('#schedule-format', 'csv');
      await page.type('#schedule-to', `http://127.0.0.1:${port}/console`);
      await page.click('#schedule-now');
      await page.click('#schedule-form button[type=submit]');
      await page.waitForFunction(() => !(document.getElementById('schedule-secret') as HTMLElement).hidden);
      const secret = await page.$eval('#schedule-secret code', (e) => e.textContent ?? '');
      const [got] = await eventually('the console’s schedule delivering', async () =>
        receiver.at('/console').length ? receiver.at('/console') : undefined,
      );
      expect(signatureValid(got, secret)).toBe(true);
      // The list shows the delivery once it is recorded (the page asks again on Refresh).
      await eventually('the delivery in the list', async () => {
        await page.click('#schedules-refresh');
        await page.waitForNetworkIdle();
        const text = await page.$eval('#schedules-table', (t) => t.textContent ?? '');
        return /delivered \(200\)/.test(text) ? text : undefined;
      });
      const row = await page.$eval('#schedules-table tbody tr', (r) => r.textContent ?? '');
      expect(row).toContain('Dramas by rating');
      expect(row).toContain('0 7 * * 1-5 Europe/Paris');
      expect(row).toContain(`http://127.0.0.1:${port}/console`);
      fs.mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SHOTS, 'console-schedules.png'), fullPage: true });
      // On a phone the form and the list fit the width (the table scrolls inside its own box).
      await page.setViewport({ width: 390, height: 844 });
      expect(
        await page.evaluate(() => {
          const width = document.documentElement.clientWidth;
          return Array.from(document.querySelectorAll('body *'))
            .filter((e) => !e.closest('.table-wrap') && e.getBoundingClientRect().right > width + 0.5)
            .map((e) => `${e.tagName.toLowerCase()}#${e.id}`);
        }),
      ).toEqual([]);
      await page.screenshot({ path: path.join(SHOTS, 'console-schedules-phone.png'), fullPage: true });
      await page.setViewport({ width: 1280, height: 800 });
      await page.click('#schedules-table tbody tr button');
      await page.waitForFunction(() => document.querySelectorAll('#schedules-table tbody tr').length === 0);
      expect(await listOf(gina)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
    // A hang guard: Chromium's start, the console's pages and a delivery, on a loaded machine.
  }, 180_000);

  it('a server killed mid-delivery delivers once after restart (same Idempotency-Key); the restart loses no schedule', async () => {
    receiver.answer = (r, n) => (r.path === '/crash' && n === 1 ? 'hold' : 200);
    const dora = await createIdentity(stack.dataDir, 'dora', { indexes: '*' });
    const kept = (await schedule(dora, { cron: '30 6 * * 1', deliver: webhook('/kept') })).data!;
    const before = await find(dora, kept.scheduleId);
    const crash = (await schedule(dora, { deliver: webhook('/crash'), runNow: true })).data!;
    await eventually('the held delivery', async () => (receiver.at('/crash').length === 1 ? true : undefined)).catch(
      (err: Error) => {
        process.stderr.write(
          quarry
            .logs()
            .filter((l) => /schedul|deliver/i.test(l))
            .slice(-30)
            .join('\n'),
        );
        throw err;
      },
    );
    // Redis appends to its file every second: the active job is on disk before the crash.
    await new Promise((r) => setTimeout(r, 1500));
    await quarry.kill();
    quarry = await startQuarry({ topology: 'all', dataDir: stack.dataDir, env });
    const again = await eventually(
      'the delivery after restart',
      async () => (receiver.at('/crash').length >= 2 ? receiver.at('/crash') : undefined),
      60000,
    );
    // A receiver that drops repeats by Idempotency-Key acts on the run once.
    const keys = again.map((r) => r.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(1);
    expect(again.every((r) => signatureValid(r, crash.secret!))).toBe(true);
    const s = await eventually('the recorded delivery', async () => {
      const x = await find(dora, crash.scheduleId);
      return x?.deliveries[0]?.outcome === 'delivered' ? x : undefined;
    });
    expect(s.deliveries[0].idempotencyKey).toBe(keys[0]);
    expect(await find(dora, kept.scheduleId)).toEqual(before);
    receiver.answer = () => 200;
    // A hang guard: a delivery waited for, a kill, a start of up to a minute, and the delivery again.
  }, 240_000);
});

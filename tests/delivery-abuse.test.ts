import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createIdentity, type Identity } from './support/identities';
import { rawRequest, type RawResponse } from './support/http';
import { startStackWithData, typedCall, unwrap, type Stack } from './support/stack';

/*
 * Deliveries, rate limits and the audit trail as an attacker with an ordinary token (or none) would
 * abuse them: the real built server, a real webhook receiver, a receiver that trickles its answer, a
 * real SMTP server, and `quarry audit` read back.
 */

interface Delivery {
  outcome: 'delivered' | 'retrying' | 'failed' | 'stopped';
  detail: string;
}
interface AuditRow {
  userName: string | null;
  method: string;
  index: string | null;
  outcome: string;
  returned: number | null;
  requestId: string;
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Answers 200 to every POST and keeps what it got, by path. */
class Receiver {
  readonly got: string[] = [];
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.got.push(req.url ?? '');
      res.writeHead(200);
      res.end();
    });
  });
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }
  at(path: string): number {
    return this.got.filter((p) => p === path).length;
  }
  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Reads a request, then answers its status line one byte every 2 s: never idle, never done. */
class TricklingReceiver {
  open = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((socket) => {
    this.sockets.add(socket);
    this.open++;
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.open--;
      this.sockets.delete(socket);
    });
    socket.once('data', () => {
      const line = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n';
      let i = 0;
      const timer = setInterval(() => {
        if (i >= line.length || socket.destroyed) return clearInterval(timer);
        socket.write(line[i++]!);
      }, 2000);
      socket.once('close', () => clearInterval(timer));
    });
  });
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }
  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('deliveries, rate limits and the audit trail under abuse', () => {
  let stack: Stack;
  const receiver = new Receiver();
  const trickler = new TricklingReceiver();
  let port: number;
  let slowPort: number;
  let smtp: SMTPServer;
  const mails: string[][] = [];
  const guids: Record<string, string[]> = {};
  const crosstab = {
    index: 'movies',
    query: '(Major Genre):Drama',
    rows: ['MPAA Rating'],
    columns: [],
    totals: [{ aggregationType: 'Count' }],
    format: 'csv',
  };

  const call = typedCall(() => stack.quarry.baseUrl);
  const schedule = (who: Identity, params: Record<string, unknown>) =>
    call<{ scheduleId: string }>(who, 'REPORTS.SCHEDULE', { cron: '0 8 1 1 *', format: 'json', ...params });
  const webhook = (path: string, at = port) => ({ webhook: { url: `http://127.0.0.1:${at}${path}` } });
  const deliveriesOf = async (who: Identity, id: string): Promise<Delivery[]> => {
    const res = await call<{ schedules: Array<{ scheduleId: string; deliveries: Delivery[] }> }>(
      who,
      'REPORTS.SCHEDULES',
      {},
    );
    if (!res.data) {
      // This stack limits each token to 5 calls a second: a poll that meets the limit waits and tries again.
      if (res.error?.code !== 429) throw new Error(`REPORTS.SCHEDULES: ${JSON.stringify(res.error)}`);
      await new Promise((r) => setTimeout(r, 1000));
      return [];
    }
    return res.data.schedules.find((s) => s.scheduleId === id)?.deliveries ?? [];
  };
  const audit = async (args: string[]): Promise<AuditRow[]> => {
    const res = await stack.cli(['audit', '--json', '--limit', '100000', ...args]);
    if (res.code !== 0) throw new Error(res.stderr);
    return res.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditRow);
  };
  /** A user with `n` saved crosstab reports of their own. */
  const userWithReports = async (name: string, n: number): Promise<Identity> => {
    const who = await createIdentity(stack.dataDir, name, { indexes: '*' });
    guids[name] = [];
    for (let i = 0; i < n; i++) {
      const saved = await call<{ report: { guid: string } }>(who, 'CROSSTAB.EXECUTE', {
        ...crosstab,
        saveReport: { name: `${name} ${i}` },
      });
      guids[name].push(saved.data!.report.guid);
    }
    return who;
  };

  beforeAll(async () => {
    port = await receiver.start();
    slowPort = await trickler.start();
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        stream.resume();
        stream.on('end', () => {
          mails.push(session.envelope.rcptTo.map((r) => r.address));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    stack = await startStackWithData({
      env: {
        QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${port},127.0.0.1:${slowPort},localhost,*`,
        QUARRY_SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
        QUARRY_DELIVERIES_PER_DAY: '3',
        QUARRY_RECIPIENTS_PER_DAY: '25',
        QUARRY_RATE_LIMIT: '5',
        QUARRY_RATE_BURST: '20',
        QUARRY_ANON_RATE_LIMIT: '5',
        QUARRY_ANON_RATE_BURST: '5',
        QUARRY_EMBED_TOKENS_PER_USER: '6',
        // One try per run: the slow receiver's run is not tried again while the test looks.
        QUARRY_DELIVERY_BACKOFF_MS: '600000',
      },
    });
  }, 180000);

  afterAll(async () => {
    await stack?.quarry.stop();
    await receiver.stop();
    await trickler.stop();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  it('checks the report and the destination before the cron, and settles a sparse-day cron from its fields', async () => {
    const eve = await userWithReports('cron-eve', 1);
    // The cron is refused only once the cheap checks pass: an unknown report or a refused host comes first.
    const unknown = await schedule(eve, {
      guid: '00000000-0000-4000-8000-000000000000',
      cron: '* * * * *',
      deliver: webhook('/cron'),
    });
    expect(unknown.error?.data.detail).toMatch(/^Report .* not found/);
    const refused = await schedule(eve, {
      guid: guids['cron-eve']![0],
      cron: '* * * * *',
      deliver: { webhook: { url: 'http://10.1.2.3/x' } },
    });
    expect(refused.error?.data.detail).toMatch(/^deliver\.webhook\.url: 10\.1\.2\.3 is a private address/);
    const hostile = await Promise.all(
      Array.from({ length: 5 }, () =>
        schedule(eve, {
          guid: guids['cron-eve']![0],
          cron: '*/5 * L * *',
          timeZone: 'Europe/Paris',
          deliver: webhook('/cron'),
        }),
      ),
    );
    expect(hostile.map((r) => r.error?.data.detail ?? 'ok')).toEqual(Array(5).fill('ok'));
    const tooOften = await schedule(eve, {
      guid: guids['cron-eve']![0],
      cron: '*/4 * L * *',
      timeZone: 'Europe/Paris',
      deliver: webhook('/cron'),
    });
    expect(tooOften.error?.data.detail).toMatch(/runs 240 s apart .* \(QUARRY_SCHEDULE_MIN_INTERVAL_S\)/);
  });

  it('counts runNow against the minimum interval: schedule, unschedule and schedule again delivers once', async () => {
    const mal = await userWithReports('relay-mal', 1);
    const first = await schedule(mal, { guid: guids['relay-mal']![0], runNow: true, deliver: webhook('/relay') });
    expect(first.error).toBeUndefined();
    await call(mal, 'REPORTS.UNSCHEDULE', { scheduleId: first.data!.scheduleId });
    const again = await schedule(mal, { guid: guids['relay-mal']![0], runNow: true, deliver: webhook('/relay') });
    expect(again.error).toMatchObject({ code: 400 });
    expect(again.error!.data.detail).toMatch(/^runNow: .* 300 s .*\(QUARRY_SCHEDULE_MIN_INTERVAL_S\)/);
    await eventually('the first delivery', async () => (receiver.at('/relay') >= 1 ? true : undefined));
    // Without runNow the same schedule is accepted: only the at-once delivery is refused.
    const timerOnly = await schedule(mal, { guid: guids['relay-mal']![0], deliver: webhook('/relay') });
    expect(timerOnly.error).toBeUndefined();
    expect(receiver.at('/relay')).toBe(1);
  });

  it('caps deliveries per owner and day (QUARRY_DELIVERIES_PER_DAY), and records each in the audit trail', async () => {
    const dan = await userWithReports('daily-dan', 4);
    const ids: string[] = [];
    for (const guid of guids['daily-dan']!) {
      const made = await schedule(dan, { guid, format: 'csv', runNow: true, deliver: webhook('/daily') });
      expect(made.error).toBeUndefined();
      ids.push(made.data!.scheduleId);
    }
    const outcomes = await eventually('every run recorded', async () => {
      const all = await Promise.all(ids.map(async (id) => (await deliveriesOf(dan, id))[0]));
      return all.every((d) => d !== undefined) ? all.map((d) => d!) : undefined;
    });
    expect(outcomes.filter((d) => d.outcome === 'delivered')).toHaveLength(3);
    const over = outcomes.filter((d) => d.outcome === 'failed');
    expect(over).toHaveLength(1);
    expect(over[0]!.detail).toMatch(/3 deliveries of the day .*\(QUARRY_DELIVERIES_PER_DAY\)/);
    expect(receiver.at('/daily')).toBe(3);

    const rows = await eventually('the deliveries in the audit trail', async () => {
      const got = await audit(['--user', 'daily-dan', '--method', '(delivery)']);
      return got.length >= 4 ? got : undefined;
    });
    expect(rows.map((r) => r.outcome).sort()).toEqual(['delivered', 'delivered', 'delivered', 'refused']);
    for (const r of rows.filter((x) => x.outcome === 'delivered')) {
      expect(ids.some((id) => r.requestId.startsWith(`${id}/127.0.0.1:${port}/v1`))).toBe(true);
      expect(r.returned).toEqual(expect.any(Number));
    }
  });

  it('caps e-mail recipients per owner and day (QUARRY_RECIPIENTS_PER_DAY)', async () => {
    const rae = await userWithReports('mail-rae', 2);
    const to = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`);
    const first = await schedule(rae, {
      guid: guids['mail-rae']![0],
      runNow: true,
      deliver: { email: { to: to(20, 'a') } },
    });
    expect(first.error).toBeUndefined();
    const second = await schedule(rae, {
      guid: guids['mail-rae']![1],
      runNow: true,
      deliver: { email: { to: to(10, 'b') } },
    });
    expect(second.error).toBeUndefined();
    const [d] = await eventually('the second run recorded', async () => {
      const got = await deliveriesOf(rae, second.data!.scheduleId);
      return got.length > 0 ? got : undefined;
    });
    expect(d).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/QUARRY_RECIPIENTS_PER_DAY/) });
    await eventually('the first mail', async () => (mails.length > 0 ? true : undefined));
    expect(mails.flat().filter((a) => a.startsWith('b'))).toEqual([]);
  });

  it('a receiver trickling its answer holds neither another owner’s delivery nor its own past the deadline', async () => {
    // Without the deadlines the slow try lasts as long as the receiver likes: this test's own timeout ends it.
    const slow = await userWithReports('slow-sam', 1);
    const other = await userWithReports('quick-quinn', 1);
    const held = await schedule(slow, {
      guid: guids['slow-sam']![0],
      runNow: true,
      deliver: webhook('/slow', slowPort),
    });
    expect(held.error).toBeUndefined();
    await eventually('the slow receiver to be called', async () => (trickler.open > 0 ? true : undefined));
    const quick = await schedule(other, {
      guid: guids['quick-quinn']![0],
      runNow: true,
      deliver: webhook('/quick'),
    });
    expect(quick.error).toBeUndefined();
    // Delivered while the slow receiver still holds its connection.
    await eventually('the other owner’s delivery', async () => (receiver.at('/quick') === 1 ? true : undefined));
    expect(trickler.open).toBeGreaterThan(0);
    const [d] = await eventually('the slow try to end', async () => {
      const got = await deliveriesOf(slow, held.data!.scheduleId);
      return got.length > 0 ? got : undefined;
    });
    expect(d).toMatchObject({ outcome: 'retrying', detail: expect.stringMatching(/headers within 10000 ms/) });
  }, 90000);

  it('`quarry audit` prints a hostile index name escaped, on its own line, and records it as not a name', async () => {
    const mallory = await createIdentity(stack.dataDir, 'forger-mallory', { indexes: '*' });
    const forged = `x\u001b[2K\r\nroot\tid\tTOKENS.EMBED\tmovies\tok\t1\t-\treq\n`;
    const res = await call(mallory, 'QUERIES.EXECUTE', { index: forged, query: '*' });
    expect([400, 404]).toContain(res.error?.code);
    const [row] = await eventually('the forged call in the trail', async () => {
      const got = await audit(['--user', 'forger-mallory']);
      return got.length > 0 ? got : undefined;
    });
    expect(row!.index).toBe('(invalid name)');
    const table = await stack.cli(['audit', '--user', 'forger-mallory']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect([...table.stdout].filter((c) => c === '\u001b' || c === '\r')).toEqual([]);
    expect(lines.filter((l) => l.startsWith('root'))).toEqual([]);
    for (const l of lines) expect(l.split('\t')).toHaveLength(10);
  });

  it('embed tokens draw on their issuer’s rate limit: six of them do not multiply it, and a seventh is refused', async () => {
    const ivy = await createIdentity(stack.dataDir, 'embed-ivy', { indexes: '*' });
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = unwrap<{ token: string }>(
        await stack.client(ivy).call('TOKENS.EMBED', { index: 'movies', ttlSeconds: 600 }),
      );
      tokens.push(res.data!.token);
    }
    // Six live ones is the cap (QUARRY_EMBED_TOKENS_PER_USER): a seventh is refused until one is revoked.
    const seventh = unwrap(await stack.client(ivy).call('TOKENS.EMBED', { index: 'movies', ttlSeconds: 600 }));
    expect(seventh.error).toMatchObject({ code: 400 });
    expect(seventh.error!.data.detail).toMatch(
      /^ttlSeconds: you hold 6 live embed tokens, the most one user may \(QUARRY_EMBED_TOKENS_PER_USER\)/,
    );
    // The burst the issuer has left refills: wait it out, so the 60 calls start from a full bucket.
    await new Promise((r) => setTimeout(r, 4500));
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        stack
          .client({ user: 'embed', token: tokens[i % 6]!, tokenId: '' })
          .call('QUERIES.EXECUTE', { index: 'movies', pageSize: 1 }),
      ),
    );
    const statuses = answers.map((a: RawResponse) => a.status);
    // Six buckets of their own would admit all 60 (25 each); the issuer's one bucket (5/s, 20 burst)
    // cannot, however long the 60 take on a loaded machine.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  });

  it('limits calls without a token per client address, and records a flood as a few audit rows', async () => {
    const before = (await audit(['--method', 'rpc.discover'])).length;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        rawRequest(stack.quarry.baseUrl, {
          path: '/api/v1',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' }),
        }),
      ),
    );
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThan(150);
    expect(limited[0]!.headers['retry-after']).toMatch(/^\d+$/);
    // The audit trail is written in batches: wait until the admitted calls and a refusal are in it (a
    // fixed pause can be too short on a loaded machine), then count.
    await eventually('the flood in the audit trail', async () => {
      const discovered = (await audit(['--method', 'rpc.discover'])).length - before;
      const refused = (await audit(['--method', '(rate limited)'])).some((r) => r.userName === null);
      return discovered >= answers.length - limited.length && refused ? true : undefined;
    });
    const discovered = (await audit(['--method', 'rpc.discover'])).length - before;
    expect(discovered).toBe(answers.length - limited.length);
    const refusals = (await audit(['--method', '(rate limited)'])).filter((r) => r.userName === null);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.length).toBeLessThan(10);
  });

  it('refuses IPv4-compatible, site-local and discard-prefix IPv6, and a portless pattern admits 80 and 443 only', async () => {
    const lee = await userWithReports('policy-lee', 1);
    const cases: Array<[string, RegExp]> = [
      ['http://[::7f00:1]/x', /::7f00:1/],
      ['http://[fec0::1]/x', /fec0::1/],
      ['http://[100::1]/x', /100::1/],
      [`http://localhost:${new URL(stack.quarry.baseUrl).port}/api/v1`, /does not match QUARRY_WEBHOOK_ALLOW/],
    ];
    for (const [url, detail] of cases) {
      const res = await schedule(lee, { guid: guids['policy-lee']![0], deliver: { webhook: { url } } });
      expect({ url, code: res.error?.code, detail: res.error?.data.detail }).toEqual({
        url,
        code: 400,
        detail: expect.stringMatching(new RegExp(`^deliver\\.webhook\\.url: .*${detail.source}`)),
      });
    }
  });
});

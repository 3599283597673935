import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sqliteFile } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import { createIdentity, type Identity } from './support/identities';
import { rawRequest, rpcClient } from './support/http';
import { makeDataDir, runCli, startQuarry, type RunningQuarry } from './support/quarry-process';

/*
 * 4 and 6 and the audit trail, through HTTP against the real server: per-token rate
 * limits under concurrent requests on many connections, the body deadline against a client that sends
 * slowly, the audit of refused and limited calls read back with `quarry audit`, its purge, and the data
 * directory's file modes.
 */

const RATE = { QUARRY_RATE_LIMIT: '0.5', QUARRY_RATE_BURST: '4' };
// 1 a window of 2 s at 0.5/s, plus the 4 of the burst.
const ADMITTED_AT_ONCE = 5;
// Long enough that a quick call, or a body sent in three pieces 100 ms apart, fits well inside it on a
// loaded machine; short enough against the slow senders below (a byte every 150 or 200 ms: 9 s or more).
const BODY_TIMEOUT_MS = 3000;

let quarry: RunningQuarry;
let dataDir: string;
const env = () => ({ QUARRY_DATA_DIR: dataDir });

beforeAll(async () => {
  dataDir = makeDataDir('quarry-limits-');
  const csv = path.join(dataDir, 'cities.csv');
  fs.writeFileSync(csv, 'city,population\nParis,2100000\nLyon,520000\nNice,340000\n');
  const load = await runCli(['index', 'load', 'cities', csv], env());
  if (load.code !== 0) throw new Error(load.stderr);
  fs.rmSync(csv);
  // An entry older than QUARRY_AUDIT_DAYS, written before start: the gateway purges it when it starts.
  const store = new SqliteMetadataStore(sqliteFile(dataDir));
  await store.appendAudit([
    {
      time: new Date(Date.now() - 3 * 86_400_000).toISOString(),
      userId: null,
      userName: 'ancient',
      tokenId: null,
      embedId: null,
      method: 'INDEXES.FIND',
      index: null,
      paramsDigest: null,
      outcome: 'ok',
      durationMs: 1,
      returned: 0,
      requestId: 'old',
    },
  ]);
  await store.close();
  quarry = await startQuarry({
    topology: 'all',
    dataDir,
    env: { ...RATE, QUARRY_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS), QUARRY_AUDIT_DAYS: '2' },
  });
}, 120000);

afterAll(async () => {
  await quarry?.stop();
});

const find = (who: Identity, extra?: { headers?: Record<string, string>; id?: unknown }) =>
  rpcClient(quarry.baseUrl, who.token).call('INDEXES.FIND', {}, extra);

async function auditRows(
  args: string[],
  atLeast: number | ((rows: Array<Record<string, unknown>>) => boolean),
): Promise<Array<Record<string, unknown>>> {
  const enough = typeof atLeast === 'number' ? (rows: unknown[]) => rows.length >= atLeast : atLeast;
  // A hang guard: each try starts a CLI process, slow on a loaded machine.
  const until = Date.now() + 30_000;
  for (;;) {
    const res = await runCli(['audit', '--json', ...args], env());
    expect(res.code).toBe(0);
    const rows = res.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    if (enough(rows) || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('per-token rate limits (QUARRY_RATE_LIMIT, QUARRY_RATE_BURST)', () => {
  it('admits the rate plus the burst of 40 concurrent calls on 40 connections, and refuses the rest with a plain 429', async () => {
    const racer = await createIdentity(dataDir, 'racer');
    const bystander = await createIdentity(dataDir, 'bystander');
    // Each on its own connection (agent: false): opening many connections buys nothing.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => find(racer, { id: i })));
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    expect({ ok: ok.length, limited: limited.length }).toEqual({
      ok: ADMITTED_AT_ONCE,
      limited: 40 - ADMITTED_AT_ONCE,
    });
    for (const r of limited) {
      expect(r.headers['content-type']).toBe('application/problem+json');
      expect(r.json).toMatchObject({ status: 429, title: 'Too Many Requests' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(r.headers['retry-after']))).toBe(true);
      // The IETF RateLimit fields: nothing left, reset when Retry-After says.
      expect(r.headers['ratelimit']).toBe(`"token-burst";r=0;t=${r.headers['retry-after']}`);
    }
    // Every answer the limit governs lists the policies (0.5/s: 1 in 2 s; the burst of 4 refills in 8 s),
    // and the admitted ones say what is left: together, each unit of the allowance exactly once.
    for (const r of [...ok, ...limited])
      expect(r.headers['ratelimit-policy']).toBe('"token";q=1;w=2, "token-burst";q=4;w=8');
    // (t counts down from the window: on a slow machine the last takes may see 7 s of the burst's 8 left.)
    const left = ok.map((r) => /^"([\w-]+)";r=(\d+);t=(\d+)$/.exec(String(r.headers['ratelimit'])));
    expect(left.map((m) => `${m?.[1]} ${m?.[2]}`).sort()).toEqual(
      ['token 0', 'token-burst 0', 'token-burst 1', 'token-burst 2', 'token-burst 3'].sort(),
    );
    for (const m of left) expect(Number(m?.[3])).toBeGreaterThanOrEqual(1);
    // Another token has its own allowance.
    expect((await find(bystander)).status).toBe(200);
    // A notification is refused the same way (the 429 comes before the body is read).
    const note = await rawRequest(quarry.baseUrl, {
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${racer.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'INDEXES.FIND' }),
    });
    expect(note.status).toBe(429);
    // Waiting what Retry-After says is enough.
    await new Promise((r) => setTimeout(r, Number(note.headers['retry-after']) * 1000 + 100));
    expect((await find(racer)).status).toBe(200);
  });

  it('counts issuing an embed token, and the embed token’s calls, against the token that issued it', async () => {
    const creator = await createIdentity(dataDir, 'embed-creator');
    const issue = () =>
      rpcClient(quarry.baseUrl, creator.token).call('TOKENS.EMBED', { index: 'cities', ttlSeconds: 60 });
    const issued = await Promise.all(Array.from({ length: 8 }, issue));
    expect(issued.filter((r) => r.status === 429)).toHaveLength(8 - ADMITTED_AT_ONCE);
    const token = (issued.find((r) => r.status === 200)!.json as { result: { data: { token: string } } }).result.data
      .token;
    const search = () => rpcClient(quarry.baseUrl, token).call('QUERIES.EXECUTE', { index: 'cities', pageSize: 1 });
    // Issuing spent the creator's allowance, and an embed token has none of its own to fall back on.
    const calls = await Promise.all(Array.from({ length: 10 }, search));
    expect(calls.filter((r) => r.status === 200)).toHaveLength(0);
    await new Promise((r) => setTimeout(r, Number(calls[0]!.headers['retry-after']) * 1000 + 100));
    expect((await search()).status).toBe(200);
  });

  it('records limited calls in the audit trail with their user', async () => {
    const rows = await auditRows(['--user', 'racer'], 42);
    const limited = rows.filter((r) => r.outcome === '429');
    expect(limited.length).toBe(40 - ADMITTED_AT_ONCE + 1);
    expect(limited[0]).toMatchObject({ userName: 'racer', method: '(rate limited)' });
    expect(rows.filter((r) => r.outcome === 'ok' && r.method === 'INDEXES.FIND').length).toBe(ADMITTED_AT_ONCE + 1);
  });
});

/** Headers now, the body a piece at a time with pauses; resolves with what the server answered and whether it closed. */
function slowRequest(
  token: string,
  pieces: string[],
  pauseMs: number,
): Promise<{ head: string; closed: boolean; ms: number }> {
  const body = pieces.join('');
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(quarry.port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d) => (received += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ head: received, closed: true, ms: Date.now() - started });
    });
    socket.on('connect', () => {
      socket.write(
        `POST /api/v1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      );
      let i = 0;
      const next = () => {
        if (socket.destroyed) return;
        if (i < pieces.length) {
          socket.write(pieces[i++]);
          timer = setTimeout(next, pauseMs);
        } else {
          // All sent: give the answer a moment, then report what came (keep-alive keeps the socket open).
          timer = setTimeout(() => {
            resolve({ head: received, closed: socket.destroyed, ms: Date.now() - started });
            socket.destroy();
          }, 500);
        }
      };
      next();
    });
    setTimeout(() => reject(new Error('no answer in 15 s')), 15000).unref();
  });
}

describe('the body deadline (QUARRY_BODY_TIMEOUT_MS)', () => {
  it('answers 408 and closes the connection when an authenticated body arrives too slowly', async () => {
    const slow = await createIdentity(dataDir, 'slow-sender');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND', params: {} });
    // One byte every 150 ms: the whole body would take several seconds.
    const res = await slowRequest(slow.token, body.split(''), 150);
    expect(res.head).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    expect(res.head).toMatch(/Content-Type: application\/problem\+json/i);
    expect(res.head).toMatch(/Connection: close/i);
    expect(res.head).toContain(`did not arrive within ${BODY_TIMEOUT_MS} ms`);
    expect(res.closed).toBe(true);
    expect(res.ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    expect(res.ms).toBeLessThan(BODY_TIMEOUT_MS + 3000);
    // A body sent in pieces within the deadline is read as usual.
    const third = Math.ceil(body.length / 3);
    const fine = await slowRequest(
      slow.token,
      [body.slice(0, third), body.slice(third, 2 * third), body.slice(2 * third)],
      100,
    );
    expect(fine.head).toMatch(/^HTTP\/1\.1 200 OK/);
    const rows = await auditRows(['--user', 'slow-sender'], 2);
    expect(rows.map((r) => r.outcome).sort()).toEqual(['408', 'ok']);
  });

  it('keeps serving others while several slow senders wait out their deadline', async () => {
    const slow = await createIdentity(dataDir, 'slow-many');
    const other = await createIdentity(dataDir, 'not-slow');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND', params: {} });
    const slowOnes = Array.from({ length: 4 }, () => slowRequest(slow.token, body.split(''), 200));
    const started = Date.now();
    expect((await find(other)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(BODY_TIMEOUT_MS);
    for (const r of await Promise.all(slowOnes)) expect(r.head).toMatch(/^HTTP\/1\.1 (408|429)/);
  });
});

describe('quarry audit', () => {
  // In one test: a denied call, a rate-limited call and an embed-token call of one user,
  // each read back from `quarry audit` under that user, with the token or embed token that made it.
  it('records one user’s denied, rate-limited and embed-token calls, each with that user', async () => {
    const narrow = await createIdentity(dataDir, 'trio', { scopes: 'indexes:read' });
    const full = await createIdentity(dataDir, 'trio');
    const denied = await rpcClient(quarry.baseUrl, narrow.token).call('QUERIES.EXECUTE', { index: 'cities' });
    expect((denied.json as { error: { code: number } }).error.code).toBe(403);
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => find(narrow, { id: i })));
    const limitedCount = burst.filter((r) => r.status === 429).length;
    expect(limitedCount).toBeGreaterThan(0);
    const issued = await rpcClient(quarry.baseUrl, full.token).call('TOKENS.EMBED', {
      index: 'cities',
      ttlSeconds: 60,
    });
    const embed = (issued.json as { result: { data: { token: string; id: string } } }).result.data;
    const embedded = await rpcClient(quarry.baseUrl, embed.token).call('QUERIES.EXECUTE', { index: 'cities' });
    expect(embedded.status).toBe(200);

    const rows = await auditRows(['--user', 'trio'], (got) => got.some((r) => r.embedId === embed.id));
    expect(rows.every((r) => r.userName === 'trio')).toBe(true);
    expect(rows.filter((r) => r.outcome === '403')).toEqual([
      expect.objectContaining({ method: 'QUERIES.EXECUTE', index: 'cities', tokenId: narrow.tokenId, embedId: null }),
    ]);
    const limited = rows.filter((r) => r.outcome === '429');
    expect(limited).toHaveLength(limitedCount);
    expect(limited[0]).toMatchObject({ method: '(rate limited)', tokenId: narrow.tokenId });
    expect(rows.filter((r) => r.embedId === embed.id)).toEqual([
      expect.objectContaining({ method: 'QUERIES.EXECUTE', index: 'cities', outcome: 'ok', tokenId: full.tokenId }),
    ]);
  });

  it('lists denied calls with their user, filters by method and time, and prints JSON or a table', async () => {
    const denied = await createIdentity(dataDir, 'denied-user', { scopes: 'indexes:read' });
    const search = await rpcClient(quarry.baseUrl, denied.token).call('QUERIES.EXECUTE', { index: 'cities' });
    expect((search.json as { error: { code: number } }).error.code).toBe(403);
    expect((await runCli(['token', 'revoke', denied.tokenId], env())).code).toBe(0);
    expect((await find(denied)).status).toBe(401);

    const rows = await auditRows(['--user', 'denied-user'], 2);
    expect(rows).toEqual([
      expect.objectContaining({ outcome: '401', userName: 'denied-user', tokenId: denied.tokenId }),
      expect.objectContaining({
        outcome: '403',
        method: 'QUERIES.EXECUTE',
        index: 'cities',
        userName: 'denied-user',
        tokenId: denied.tokenId,
        returned: null,
      }),
    ]);
    expect(rows[1].durationMs).toEqual(expect.any(Number));
    expect(rows[1].time).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const byMethod = await auditRows(['--user', 'denied-user', '--method', 'queries.execute'], 1);
    expect(byMethod.map((r) => r.outcome)).toEqual(['403']);
    expect(
      await auditRows(['--user', 'denied-user', '--since', new Date(Date.now() + 60_000).toISOString()], 0),
    ).toEqual([]);
    expect((await auditRows(['--user', 'denied-user', '--since', '1h'], 2)).length).toBe(2);

    const table = await runCli(['audit', '--user', 'denied-user'], env());
    const lines = table.stdout.trim().split('\n');
    expect(lines[0].split('\t')).toEqual([
      'time',
      'user',
      'token',
      'method',
      'index',
      'outcome',
      'ms',
      'returned',
      'request',
      'target',
    ]);
    expect(lines[2].split('\t').slice(1, 6)).toEqual([
      'denied-user',
      denied.tokenId,
      'QUERIES.EXECUTE',
      'cities',
      '403',
    ]);

    const bad = await runCli(['audit', '--since', 'yesterday'], env());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--since must be a duration/);
    expect((await runCli(['audit', '--method', 'DROP.TABLE'], env())).stderr).toMatch(/is not a method/);
  });

  it('purged the entries older than QUARRY_AUDIT_DAYS when the gateway started', async () => {
    // The purge runs in the background of the start: asked until it is gone, not once.
    expect(await auditRows(['--user', 'ancient'], (rows) => rows.length === 0)).toEqual([]);
  });

  it('records calls without a token too, with no user', async () => {
    const res = await rawRequest(quarry.baseUrl, {
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'anonymous-call' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND' }),
    });
    expect(res.status).toBe(401);
    const rows = await auditRows(['--method', '(unauthenticated)'], (got) =>
      got.some((r) => r.requestId === 'anonymous-call'),
    );
    expect(rows.find((r) => r.requestId === 'anonymous-call')).toMatchObject({ userName: null, outcome: '401' });
  });
});

describe('the data directory', () => {
  it('holds files readable by their owner only (0600) in directories of their owner only (0700)', () => {
    const seen: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        const mode = fs.statSync(p).mode & 0o777;
        seen.push(path.relative(dataDir, p));
        if (entry.isDirectory()) {
          expect({ p, mode: mode.toString(8) }).toEqual({ p, mode: '700' });
          walk(p);
        } else expect({ p, mode: mode.toString(8) }).toEqual({ p, mode: '600' });
      }
    };
    walk(dataDir);
    // The database, the snapshot of the loaded index and the keys are among what was checked.
    expect(seen).toEqual(expect.arrayContaining(['quarry.db', 'cursor.secret', 'embed.secret']));
    expect(seen.some((p) => p.endsWith('.parquet'))).toBe(true);
  });
});

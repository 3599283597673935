import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import { openRpcPost, rawRequest, rpcClient, type RawResponse } from './support/http';
import { freePort } from './support/quarry-process';
import { createIdentity, startStackWithData, unwrap, type Stack } from './support/stack';
import type { Identity } from './support/identities';
import { launchBrowser } from './support/browser';
import { METHODS } from '@quarry/contract';
import { paramsDigest } from '../services/gateway/src/domain/audit-recorder';

/*
 * And the audit of embed calls: TOKENS.EMBED through JSON-RPC, every way to break
 * an embed token (forged, tampered, alg none, expired, revoked issuer, removed user, another index or
 * method, a widening realm), CORS from a page served on another origin in headless Chromium, and INDEXES.FIND
 * counts for realm-restricted callers. Screenshots go to test-output/embed/.
 */

const SHOTS = path.join(__dirname, '..', 'test-output', 'embed');
const DRAMA = '(Major Genre):Drama';

let stack: Stack;
let analyst: Identity;
let dramaOnly: Identity;
let noEmbed: Identity;
let pageServer: http.Server;
let pagePort: number;
let allowedOrigin: string;
let browser: Browser;
let counts: { all: number; drama: number; dramaR: number };

/** The page an integrator would write: the token in the fragment, results shown as text. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Embedded Quarry</title>
<style>body{font:14px sans-serif;margin:24px}table{border-collapse:collapse}td,th{border:1px solid #999;padding:4px 8px}</style>
</head><body><h1>Dramas, embedded</h1><p id="status">loading…</p><table id="out"></table><script>
(async () => {
  const q = new URLSearchParams(location.hash.slice(1));
  const call = (method, params) => fetch(q.get('api') + '/api/v1', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + q.get('token') },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).then((r) => r.json());
  try {
    const body = await call(q.get('method'), JSON.parse(q.get('params')));
    window.__result = body;
    const status = document.getElementById('status');
    if (body.error) { status.textContent = 'error ' + body.error.code + ': ' + body.error.data.detail; return; }
    const d = body.result.data;
    status.textContent = 'total: ' + d.total;
    const table = document.getElementById('out');
    for (const r of d.records) {
      const tr = table.insertRow();
      for (const k of ['Title', 'Major Genre', 'IMDB Rating']) tr.insertCell().textContent = String(r[k] ?? '');
    }
  } catch (err) {
    window.__result = { failed: String(err) };
    document.getElementById('status').textContent = 'refused: ' + err;
  } finally {
    window.__done = true;
  }
})();
</script></body></html>`;

beforeAll(async () => {
  pagePort = await freePort();
  allowedOrigin = `http://127.0.0.1:${pagePort}`;
  pageServer = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => pageServer.listen(pagePort, '127.0.0.1', r));
  stack = await startStackWithData({
    env: {
      QUARRY_CORS_ORIGINS: `${allowedOrigin},https://app.example.com`,
      // Revoked embed tokens replayed by 20 callers are hundreds of token-less calls from one address:
      // this suite checks each is a 401, so the per-address limit (tests/delivery-abuse.test.ts) is off.
      QUARRY_ANON_RATE_LIMIT: '0',
    },
  });
  analyst = await createIdentity(stack.dataDir, 'embed-analyst', { indexes: '*' });
  dramaOnly = await createIdentity(stack.dataDir, 'embed-drama', {
    indexes: 'movies',
    realms: [{ index: 'movies', query: DRAMA }],
  });
  noEmbed = await createIdentity(stack.dataDir, 'embed-none', { scopes: 'query:execute,indexes:read' });
  const total = async (query: string) =>
    unwrap<{ total: number }>(
      await stack.client(analyst).call('QUERIES.EXECUTE', { index: 'movies', query, pageSize: 1 }),
    ).data!.total;
  counts = {
    all: await total('*'),
    drama: await total(DRAMA),
    dramaR: await total(`${DRAMA} AND (MPAA Rating):R`),
  };
  expect(counts.drama).toBeGreaterThan(counts.dramaR);
  expect(counts.dramaR).toBeGreaterThan(0);
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser();
}, 120000);

afterAll(async () => {
  await browser?.close();
  await stack?.quarry.stop();
  await new Promise((r) => pageServer?.close(r));
});

async function embed(who: Identity, params: Record<string, unknown>): Promise<string> {
  const res = unwrap<{ token: string; expiresAt: string }>(await stack.client(who).call('TOKENS.EMBED', params));
  if (!res.data) throw new Error(`TOKENS.EMBED failed: ${JSON.stringify(res.error)}`);
  return res.data.token;
}

const bearer = (token: string) => ({ user: 'embed', token, tokenId: '' });
const searchWith = (token: string, params: Record<string, unknown> = {}) =>
  stack.client(bearer(token)).call('QUERIES.EXECUTE', { index: 'movies', pageSize: 5, ...params });
const totalOf = (res: RawResponse) => unwrap<{ total: number }>(res).data?.total;

function problem(res: RawResponse): { status: number; detail: string } {
  expect(res.headers['content-type']).toBe('application/problem+json');
  return { status: res.status, detail: (res.json as { detail: string }).detail };
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('TOKENS.EMBED', () => {
  it('issues a signed token that searches and pivots its index, narrowed by its realm', async () => {
    const res = unwrap<{ token: string; expiresAt: string }>(
      await stack.client(analyst).call('TOKENS.EMBED', { index: 'movies', realm: DRAMA, ttlSeconds: 600 }),
    );
    expect(res.data!.token.split('.')).toHaveLength(3);
    const ttl = Date.parse(res.data!.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    const token = res.data!.token;
    expect(totalOf(await searchWith(token))).toBe(counts.drama);
    // Nothing in the query escapes the realm.
    expect(totalOf(await searchWith(token, { query: `* OR NOT ${DRAMA}` }))).toBe(counts.drama);
    const pivot = unwrap<{ data: { rows: Array<{ key: string[] }> } }>(
      await stack.client(bearer(token)).call('CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Count' }],
        format: 'json',
      }),
    );
    expect(JSON.stringify(pivot.data)).toContain('Drama');
    expect(JSON.stringify(pivot.data)).not.toContain('Comedy');
  });

  it('never widens: the user’s realm still applies, and an embed realm is ANDed to it', async () => {
    const wide = await embed(dramaOnly, { index: 'movies', realm: '*', ttlSeconds: 60 });
    expect(totalOf(await searchWith(wide))).toBe(counts.drama);
    const other = await embed(dramaOnly, { index: 'movies', realm: '(Major Genre):Comedy', ttlSeconds: 60 });
    expect(totalOf(await searchWith(other))).toBe(0);
    const narrower = await embed(dramaOnly, { index: 'movies', realm: '(MPAA Rating):R', ttlSeconds: 60 });
    expect(totalOf(await searchWith(narrower))).toBe(counts.dramaR);
    // A realm cannot close the group it is put in: it must parse alone, so this is a 400 at issuance.
    const escape = unwrap(
      await stack.client(dramaOnly).call('TOKENS.EMBED', { index: 'movies', realm: 'x) OR (*', ttlSeconds: 60 }),
    );
    expect(escape.error).toMatchObject({ code: 400, data: { detail: expect.stringMatching(/^realm: /) } });
  });

  it('refuses bad requests with a 400, 403 or 404 naming the problem', async () => {
    const ask = async (who: Identity, params: Record<string, unknown>) =>
      unwrap(await stack.client(who).call('TOKENS.EMBED', params)).error;
    expect(await ask(analyst, { index: 'movies', ttlSeconds: 86_401 })).toMatchObject({
      code: 400,
      data: { detail: 'ttlSeconds must be an integer between 1 and 86400' },
    });
    expect(await ask(analyst, { index: 'movies' })).toMatchObject({ code: 400 });
    expect(await ask(analyst, { index: 'movies', guid: 'x', ttlSeconds: 60 })).toMatchObject({
      code: 400,
      data: { detail: expect.stringContaining('give exactly one of guid and index') },
    });
    expect(await ask(analyst, { index: 'movies', realm: 'Nope:1', ttlSeconds: 60 })).toMatchObject({
      code: 400,
      data: { detail: expect.stringMatching(/^realm: .*Nope/) },
    });
    expect(await ask(dramaOnly, { index: 'flights', ttlSeconds: 60 })).toMatchObject({ code: 404 });
    expect(await ask(analyst, { index: 'no-such-index', ttlSeconds: 60 })).toMatchObject({ code: 404 });
    expect(await ask(noEmbed, { index: 'movies', ttlSeconds: 60 })).toMatchObject({
      code: 403,
      data: { detail: 'Token lacks the required scope "embed:create"' },
    });
  });

  it('may call nothing but its index’s search and pivot: other indexes, methods and saving are refused', async () => {
    const token = await embed(analyst, { index: 'movies', ttlSeconds: 60 });
    const rpc = stack.client(bearer(token));
    const refused = async (method: string, params: Record<string, unknown>) =>
      unwrap(await rpc.call(method, params)).error;
    expect(await refused('QUERIES.EXECUTE', { index: 'flights' })).toMatchObject({
      code: 403,
      data: { detail: 'This embed token may only read index "movies"' },
    });
    expect(
      await refused('CROSSTAB.EXECUTE', { index: 'flights', rows: ['origin'], totals: [{ aggregationType: 'Count' }] }),
    ).toMatchObject({ code: 403 });
    for (const [method, params] of [
      ['INDEXES.FIND', {}],
      ['REPORTS.FIND', {}],
      ['REPORTS.METADATA', { guid: 'x' }],
      ['TOKENS.EMBED', { index: 'movies', ttlSeconds: 60 }],
    ] as const)
      expect({ method, error: await refused(method, params) }).toMatchObject({ method, error: { code: 403 } });
    expect(await refused('QUERIES.EXECUTE', { index: 'movies', saveReport: { name: 'stolen' } })).toMatchObject({
      code: 403,
      data: { detail: 'An embed token may not save reports' },
    });
  });

  describe('a token that is not good is a plain HTTP 401', () => {
    let token: string;
    let header: string;
    let payload: Record<string, unknown>;
    beforeAll(async () => {
      token = await embed(analyst, { index: 'movies', realm: DRAMA, ttlSeconds: 600 });
      header = token.split('.')[0];
      payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
    });
    const expect401 = async (t: string, detail = 'Token not found or invalid') => {
      const res = await searchWith(t);
      expect(problem(res)).toEqual({ status: 401, detail });
      expect(res.headers['www-authenticate']).toContain('Bearer');
    };

    it('tampered: a widened payload under the old signature', async () => {
      const [, , sig] = token.split('.');
      await expect401(`${header}.${b64({ ...payload, realm: '*' })}.${sig}`);
      await expect401(`${header}.${b64({ ...payload, idx: 'flights' })}.${sig}`);
      await expect401(`${header}.${b64({ ...payload, exp: Number(payload.exp) + 86_400 })}.${sig}`);
    });

    it('forged: signed with another key, or with alg none', async () => {
      const body = `${header}.${b64({ ...payload, realm: undefined })}`;
      await expect401(
        `${body}.${createHmac('sha256', 'a guessed key of 32 characters!!').update(body).digest('base64url')}`,
      );
      const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}`;
      await expect401(`${none}.`);
      await expect401(`${none}.${token.split('.')[2]}`);
      // HS256 with the right payload but a header asking for another algorithm.
      await expect401(`${b64({ alg: 'HS512', typ: 'JWT' })}.${token.split('.')[1]}.${token.split('.')[2]}`);
      await expect401('not.a.token');
    });

    it('expired', async () => {
      // Long enough to be used once on a loaded machine; then waited out by its own exp (whole seconds).
      const short = await embed(analyst, { index: 'movies', ttlSeconds: 4 });
      expect(totalOf(await searchWith(short))).toBe(counts.all);
      const exp = Number((JSON.parse(Buffer.from(short.split('.')[1], 'base64url').toString()) as { exp: number }).exp);
      await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 1100));
      await expect401(short, 'Token expired');
    });

    it('issued by a token since revoked, or by a user since disabled or removed', async () => {
      const issuer = await createIdentity(stack.dataDir, 'embed-issuer', { indexes: 'movies' });
      const viaRevoked = await embed(issuer, { index: 'movies', ttlSeconds: 600 });
      expect(totalOf(await searchWith(viaRevoked))).toBe(counts.all);
      expect((await stack.cli(['token', 'revoke', issuer.tokenId])).code).toBe(0);
      await expect401(viaRevoked, 'Token revoked');

      const second = await createIdentity(stack.dataDir, 'embed-issuer', { indexes: 'movies' });
      const viaDisabled = await embed(second, { index: 'movies', ttlSeconds: 600 });
      expect((await stack.cli(['user', 'disable', 'embed-issuer'])).code).toBe(0);
      await expect401(viaDisabled, 'Token owner could not be resolved');
      expect((await stack.cli(['user', 'enable', 'embed-issuer'])).code).toBe(0);
      expect(totalOf(await searchWith(viaDisabled))).toBe(counts.all);
      expect((await stack.cli(['user', 'delete', 'embed-issuer'])).code).toBe(0);
      await expect401(viaDisabled, 'Token owner could not be resolved');
    });
  });
});

describe('TOKENS.REVOKE_EMBED and quarry token revoke-embed', () => {
  let issuer: Identity;
  let stranger: Identity;
  beforeAll(async () => {
    issuer = await createIdentity(stack.dataDir, 'embed-revoker', { indexes: 'movies' });
    stranger = await createIdentity(stack.dataDir, 'embed-stranger', { indexes: 'movies' });
  });
  const issue = async (who: Identity) => {
    const res = unwrap<{ token: string; id: string; expiresAt: string }>(
      await stack.client(who).call('TOKENS.EMBED', { index: 'movies', ttlSeconds: 600 }),
    );
    if (!res.data) throw new Error(`TOKENS.EMBED failed: ${JSON.stringify(res.error)}`);
    return res.data;
  };
  const revoke = (who: Identity, params: unknown) => stack.client(who).call('TOKENS.REVOKE_EMBED', params);
  const expectRevoked = async (token: string) => {
    const res = await searchWith(token);
    expect(problem(res)).toEqual({ status: 401, detail: 'Token revoked' });
    expect(res.headers['www-authenticate']).toContain('Bearer');
  };

  it('ends that one embed token: replayed, it gets the plain 401 of an expired one; its siblings keep working', async () => {
    const one = await issue(issuer);
    const sibling = await issue(issuer);
    // Another API token of the same user: its embed tokens are that user's too.
    const otherTokenOfIssuer = await createIdentity(stack.dataDir, 'embed-revoker');
    const cousin = await issue(otherTokenOfIssuer);
    expect(JSON.parse(Buffer.from(one.token.split('.')[1], 'base64url').toString())).toMatchObject({ jti: one.id });
    for (const t of [one, sibling, cousin]) expect(totalOf(await searchWith(t.token))).toBe(counts.all);

    const revoked = unwrap<{ id: string; revokedAt: string; expiresAt: string }>(await revoke(issuer, { id: one.id }));
    expect(revoked.data).toEqual({
      id: one.id,
      revokedAt: expect.stringMatching(/Z$/) as string,
      expiresAt: one.expiresAt,
    });
    expect(METHODS['TOKENS.REVOKE_EMBED'].result.safeParse(revoked.data).error).toBeUndefined();
    expect(METHODS['TOKENS.EMBED'].result.safeParse(one).error).toBeUndefined();
    await expectRevoked(one.token);
    const pivot = await stack.client(bearer(one.token)).call('CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['Major Genre'],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
    });
    expect(problem(pivot)).toEqual({ status: 401, detail: 'Token revoked' });
    expect(totalOf(await searchWith(sibling.token))).toBe(counts.all);
    expect(totalOf(await searchWith(cousin.token))).toBe(counts.all);
    // Again: nothing changes, the first revocation time stays.
    expect(unwrap(await revoke(issuer, { id: one.id })).data).toEqual(revoked.data);
    // Any token of the issuing user may revoke it.
    expect(unwrap(await revoke(issuer, { id: cousin.id })).data).toMatchObject({ id: cousin.id });
    await expectRevoked(cousin.token);
    expect(totalOf(await searchWith(sibling.token))).toBe(counts.all);
  });

  it('refuses another user’s id with the very 404 of an unknown one, and bad params, embed tokens and missing scopes', async () => {
    const theirs = await issue(issuer);
    const attempt = await revoke(stranger, { id: theirs.id });
    const unknown = await revoke(stranger, { id: '3f0c9a57-5d8e-4b7a-9c41-2e6f1d0b8a93' });
    expect(attempt.status).toBe(200);
    expect(unwrap(attempt).error).toEqual({
      code: 404,
      message: 'Not Found',
      data: expect.objectContaining({ detail: 'Embed token not found' }) as object,
    });
    expect(attempt.text).toBe(unknown.text);
    expect(attempt.headers['content-type']).toBe(unknown.headers['content-type']);
    expect(totalOf(await searchWith(theirs.token))).toBe(counts.all);

    for (const [params, detail] of [
      [{}, /id/],
      [{ id: 5 }, /id/],
      [{ id: theirs.id, extra: 1 }, /extra/],
    ] as const) {
      const res = unwrap(await revoke(issuer, params));
      expect(res.error).toMatchObject({ code: 400, data: { detail: expect.stringMatching(detail) as string } });
    }
    // An embed token may not revoke anything, not even itself; nor may a token without embed:create.
    expect(unwrap(await revoke(bearer(theirs.token), { id: theirs.id })).error?.code).toBe(403);
    expect(unwrap(await revoke(noEmbed, { id: theirs.id })).error).toMatchObject({ code: 403 });
    expect(totalOf(await searchWith(theirs.token))).toBe(counts.all);
  });

  it('lets an operator revoke any user’s with `quarry token revoke-embed`, seen by the gateway within 2 s', async () => {
    const theirs = await issue(stranger);
    expect(totalOf(await searchWith(theirs.token))).toBe(counts.all);
    const cli = await stack.cli(['token', 'revoke-embed', theirs.id]);
    expect(cli).toMatchObject({ code: 0 });
    expect(cli.stdout).toContain(`revoked embed token ${theirs.id} (user embed-stranger`);
    // The gateway's cache entry, filled by the search above (before the revoke), lives 2 s: every call
    // sent after that is refused. Judged by when each admitted call was sent, not by how long calls take to
    // answer on a loaded machine.
    const started = Date.now();
    let lastAdmittedSentMs = -1;
    for (;;) {
      const sent = Date.now() - started;
      if ((await searchWith(theirs.token)).status !== 200 || sent > 30_000) break;
      lastAdmittedSentMs = sent;
      await new Promise((r) => setTimeout(r, 100));
    }
    await expectRevoked(theirs.token);
    expect(lastAdmittedSentMs).toBeLessThan(2000);
    const unknown = await stack.cli(['token', 'revoke-embed', 'no-such-embed-token']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Embed token not found');
  });

  it('refuses a call authenticated before the revoke whose body only arrives after it', async () => {
    const target = await issue(issuer);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'QUERIES.EXECUTE', params: { index: 'movies' } });
    const answer = new Promise<RawResponse>((resolve, reject) => {
      const req = openRpcPost(stack.quarry.baseUrl, target.token, body);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: JSON.parse(text) as unknown }),
        );
      });
      req.on('error', reject);
      // Headers and half the body now (authenticated, still good); the rest once it has been revoked.
      req.write(body.slice(0, 20));
      void new Promise((r) => setTimeout(r, 300))
        .then(() => revoke(issuer, { id: target.id }))
        .then(() => req.end(body.slice(20)));
    });
    expect(problem(await answer)).toEqual({ status: 401, detail: 'Token revoked' });
  });

  it('with 20 callers replaying it while it is revoked, admits none once the revoke call has answered', async () => {
    const target = await issue(issuer);
    const calls: Array<{ sent: number; status: number }> = [];
    let stop = false;
    let revokedAt = Infinity;
    const worker = async () => {
      while (!stop) {
        const sent = performance.now();
        const res = await searchWith(target.token, { pageSize: 1 });
        calls.push({ sent, status: res.status });
      }
    };
    const workers = Array.from({ length: 20 }, worker);
    while (calls.filter((c) => c.status === 200).length < 40) await new Promise((r) => setTimeout(r, 10));
    const res = await revoke(issuer, { id: target.id });
    revokedAt = performance.now();
    expect(unwrap(res).data).toMatchObject({ id: target.id });
    // Until 20 calls sent after the revoke have answered (each worker's next one), however long that takes
    // on a loaded machine, rather than a fixed 400 ms that slow calls could outlast.
    const after = () => calls.filter((c) => c.sent > revokedAt);
    for (const deadline = Date.now() + 30_000; after().length < 20 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    stop = true;
    await Promise.all(workers);
    expect(after().length).toBeGreaterThanOrEqual(20);
    expect(after().filter((c) => c.status !== 401)).toEqual([]);
    // Every answer is one or the other: admitted before, refused after; nothing fails in between.
    expect(calls.filter((c) => c.status !== 200 && c.status !== 401)).toEqual([]);
  });

  it('is in the audit trail: the revoke, the stranger’s attempt, and the refused replay with the embed id', async () => {
    const audited = await issue(issuer);
    unwrap(await revoke(stranger, { id: audited.id }));
    expect(unwrap(await revoke(issuer, { id: audited.id })).data).toBeDefined();
    await searchWith(audited.token);
    const digest = paramsDigest({ id: audited.id });
    const [theirs] = await eventuallyAudit(
      ['--user', 'embed-stranger', '--method', 'TOKENS.REVOKE_EMBED', '--json'],
      1,
      (r) => r.paramsDigest === digest,
    );
    expect(theirs).toMatchObject({ outcome: '404', tokenId: stranger.tokenId });
    const [mine] = await eventuallyAudit(
      ['--user', 'embed-revoker', '--method', 'TOKENS.REVOKE_EMBED', '--json'],
      1,
      (r) => r.paramsDigest === digest,
    );
    expect(mine).toMatchObject({ method: 'TOKENS.REVOKE_EMBED', outcome: 'ok', tokenId: issuer.tokenId });
    const [replay] = await eventuallyAudit(['--user', 'embed-revoker', '--json'], 1, (r) => r.embedId === audited.id);
    expect(replay).toMatchObject({ method: '(unauthenticated)', outcome: '401', tokenId: issuer.tokenId });
  });
});

describe('TOKENS.EMBED for a saved report', () => {
  let guid: string;
  let otherGuid: string;
  beforeAll(async () => {
    const save = async (who: Identity, name: string, query: string, shared = false) =>
      (
        unwrap<{ report: { guid: string } }>(
          await stack.client(who).call('QUERIES.EXECUTE', {
            index: 'movies',
            query,
            pageSize: 8,
            sort: [{ field: 'IMDB Rating', direction: 'desc' }],
            saveReport: { name, shared },
          }),
        ).data as { report: { guid: string } }
      ).report.guid;
    guid = await save(analyst, 'Top rated R films', '(MPAA Rating):R');
    otherGuid = await save(analyst, 'Top rated PG films', '(MPAA Rating):PG');
  });

  it('runs that report, and only it, with the realm ANDed in', async () => {
    const token = await embed(analyst, { guid, realm: DRAMA, ttlSeconds: 600 });
    const rpc = stack.client(bearer(token));
    const ran = unwrap<{ total: number; report: { guid: string } }>(await rpc.call('REPORTS.EXECUTE', { guid }));
    expect(ran.data).toMatchObject({ total: counts.dramaR, report: { guid } });
    const refused = async (method: string, params: Record<string, unknown>) =>
      unwrap(await rpc.call(method, params)).error;
    expect(await refused('REPORTS.EXECUTE', { guid: otherGuid })).toMatchObject({
      code: 403,
      data: { detail: 'This embed token may only run the report it was issued for' },
    });
    for (const [method, params] of [
      ['QUERIES.EXECUTE', { index: 'movies' }],
      ['REPORTS.METADATA', { guid }],
      ['REPORTS.UPDATE', { guid, name: 'renamed' }],
      ['REPORTS.DELETE', { guid }],
      ['REPORTS.FIND', {}],
    ] as const)
      expect({ method, error: await refused(method, params) }).toMatchObject({ method, error: { code: 403 } });
    // Still there, unchanged.
    expect(unwrap<{ name: string }>(await stack.client(analyst).call('REPORTS.METADATA', { guid })).data?.name).toBe(
      'Top rated R films',
    );
  });

  it('is refused for a report its creator may not see, as for an unknown one (404)', async () => {
    // analyst's reports are not shared: the drama-only user cannot see them.
    for (const g of [guid, '00000000-0000-4000-8000-000000000000'])
      expect(
        unwrap(await stack.client(dramaOnly).call('TOKENS.EMBED', { guid: g, ttlSeconds: 60 })).error,
      ).toMatchObject({
        code: 404,
      });
  });
});

describe('CORS (QUARRY_CORS_ORIGINS) from headless Chromium', () => {
  async function runPage(
    origin: string,
    token: string,
    shot: string,
    call: { method: string; params: Record<string, unknown> } = {
      method: 'QUERIES.EXECUTE',
      params: { index: 'movies', pageSize: 8, sort: [{ field: 'IMDB Rating', direction: 'desc' }] },
    },
  ) {
    const context = await browser.createBrowserContext();
    try {
      const page = await context.newPage();
      const consoleLines: string[] = [];
      page.on('console', (m) => consoleLines.push(m.text()));
      await page.setViewport({ width: 720, height: 420 });
      const hash = new URLSearchParams({
        api: stack.quarry.baseUrl,
        token,
        method: call.method,
        params: JSON.stringify(call.params),
      });
      await page.goto(`${origin}/embed.html#${hash.toString()}`);
      await page.waitForFunction('window.__done === true', { timeout: 15000 });
      await page.screenshot({ path: path.join(SHOTS, shot) });
      return {
        result: (await page.evaluate('window.__result')) as {
          failed?: string;
          result?: { data: { total: number; records: Array<Record<string, unknown>> } };
        },
        status: await page.$eval('#status', (e) => e.textContent),
        rows: await page.$$eval('#out tr', (trs) => trs.map((tr) => tr.textContent)),
        consoleLines,
      };
    } finally {
      await context.close();
    }
  }

  it('lets a page on a listed origin call the API with an embed token and show the answer', async () => {
    const token = await embed(analyst, { index: 'movies', realm: DRAMA, ttlSeconds: 600 });
    const shown = await runPage(allowedOrigin, token, 'allowed-origin.png');
    expect(shown.result.failed).toBeUndefined();
    expect(shown.result.result!.data.total).toBe(counts.drama);
    expect(shown.status).toBe(`total: ${counts.drama}`);
    expect(shown.rows).toHaveLength(8);
    for (const r of shown.result.result!.data.records) expect(r['Major Genre']).toBe('Drama');
  });

  it('runs a saved report embedded in a page with a report embed token', async () => {
    const saved = unwrap<{ report: { guid: string } }>(
      await stack.client(analyst).call('QUERIES.EXECUTE', {
        index: 'movies',
        query: '(MPAA Rating):R',
        pageSize: 8,
        sort: [{ field: 'IMDB Rating', direction: 'desc' }],
        saveReport: { name: 'Embedded R films' },
      }),
    ).data!.report.guid;
    const token = await embed(analyst, { guid: saved, realm: DRAMA, ttlSeconds: 600 });
    const shown = await runPage(allowedOrigin, token, 'report-embed.png', {
      method: 'REPORTS.EXECUTE',
      params: { guid: saved },
    });
    expect(shown.result.failed).toBeUndefined();
    expect(shown.status).toBe(`total: ${counts.dramaR}`);
    expect(shown.rows).toHaveLength(8);
    for (const r of shown.result.result!.data.records)
      expect(r).toMatchObject({ 'Major Genre': 'Drama', 'MPAA Rating': 'R' });
    // The same token, asked for anything else from the page, is refused.
    const other = await runPage(allowedOrigin, token, 'report-embed-refused.png');
    expect(other.status).toBe('error 403: An embed token for a report may only run that report (REPORTS.EXECUTE)');
  });

  it('keeps the answer from a page on an origin not listed: the browser refuses it', async () => {
    const token = await embed(analyst, { index: 'movies', ttlSeconds: 600 });
    // The same page, host and port, but named localhost: another origin.
    const shown = await runPage(`http://localhost:${pagePort}`, token, 'refused-origin.png');
    expect(shown.result.failed).toMatch(/Failed to fetch/);
    expect(shown.status).toMatch(/^refused: /);
    // Refused for CORS, not for anything else (the server answered the preflight with a 403 and no CORS header).
    expect(shown.consoleLines.join('\n')).toMatch(/blocked by CORS policy/);
  });

  it('answers the preflight of listed origins only, with no wildcard and no credentials', async () => {
    const preflight = (origin: string, headers = 'authorization,content-type') =>
      rawRequest(stack.quarry.baseUrl, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': headers },
      });
    const ok = await preflight(allowedOrigin);
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(allowedOrigin);
    expect(ok.headers['access-control-allow-methods']).toBe('POST');
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
    for (const spoof of [
      'http://evil.example',
      `${allowedOrigin}.evil.example`,
      `http://127.0.0.1:${pagePort + 1}`,
      'null',
      `${allowedOrigin}/`,
      'HTTP://127.0.0.1:' + pagePort,
      'https://app.example.com.evil',
    ]) {
      const res = await preflight(spoof);
      expect({ spoof, status: res.status, acao: res.headers['access-control-allow-origin'] }).toEqual({
        spoof,
        status: 403,
        acao: undefined,
      });
    }
    // A listed origin asking to send a header the API does not take.
    expect((await preflight(allowedOrigin, 'authorization,x-evil')).status).toBe(403);
    // The call itself: the listed origin is echoed (never *), others get no CORS header at all.
    const token = await embed(analyst, { index: 'movies', ttlSeconds: 60 });
    const call = (origin: string) =>
      rpcClient(stack.quarry.baseUrl, token).call(
        'QUERIES.EXECUTE',
        { index: 'movies', pageSize: 1 },
        {
          headers: { Origin: origin },
        },
      );
    const allowed = await call('https://app.example.com');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(allowed.headers.vary).toContain('Origin');
    const other = await call('https://evil.example');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('INDEXES.FIND for a realm-restricted caller', () => {
  it('tells the count of the records it may read, never the index’s', async () => {
    const find = async (who: Identity) =>
      unwrap<{ indexes: Array<{ name: string; recordCount: number }> }>(
        await stack.client(who).call('INDEXES.FIND', {}),
      ).data!.indexes;
    expect((await find(dramaOnly)).map((i) => [i.name, i.recordCount])).toEqual([['movies', counts.drama]]);
    const all = await find(analyst);
    expect(all.find((i) => i.name === 'movies')?.recordCount).toBe(counts.all);
    // A realm that no longer fits the index reads nothing, so it counts nothing.
    const broken = await createIdentity(stack.dataDir, 'embed-broken-realm', {
      indexes: 'movies',
      realms: [{ index: 'movies', query: 'Gone:1' }],
    });
    expect((await find(broken)).map((i) => [i.name, i.recordCount])).toEqual([['movies', 0]]);
  });
});

describe('the audit trail of embed calls', () => {
  it('records embed-token calls and their refusals with the issuing user and token', async () => {
    const issuer = await createIdentity(stack.dataDir, 'embed-audited', { indexes: 'movies' });
    const token = await embed(issuer, { index: 'movies', ttlSeconds: 600 });
    await searchWith(token, { pageSize: 3 });
    await stack.client(bearer(token)).call('QUERIES.EXECUTE', { index: 'flights' });
    const rows = await eventuallyAudit(['--user', 'embed-audited', '--json'], 3);
    const [denied, ok, issued] = rows;
    expect(issued).toMatchObject({ method: 'TOKENS.EMBED', outcome: 'ok', tokenId: issuer.tokenId, embedId: null });
    expect(ok).toMatchObject({
      method: 'QUERIES.EXECUTE',
      index: 'movies',
      outcome: 'ok',
      returned: 3,
      tokenId: issuer.tokenId,
      embedId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(denied).toMatchObject({ method: 'QUERIES.EXECUTE', index: 'flights', outcome: '403', embedId: ok.embedId });
    expect(denied.paramsDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(denied.paramsDigest).not.toBe(ok.paramsDigest);
  });
});

type AuditRow = Record<string, unknown> & { embedId: string | null; paramsDigest: string };

/**
 * The audit rows `quarry audit` lists (those `match` accepts), once there are `atLeast` of them or 30 s have
 * passed (a hang guard: each try starts a CLI process, slow on a loaded machine).
 */
async function eventuallyAudit(
  args: string[],
  atLeast: number,
  match: (row: AuditRow) => boolean = () => true,
): Promise<AuditRow[]> {
  const until = Date.now() + 30_000;
  for (;;) {
    const res = await stack.cli(['audit', ...args]);
    expect(res.code).toBe(0);
    const rows = res.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditRow)
      .filter(match);
    if (rows.length >= atLeast || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

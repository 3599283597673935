import fs from 'node:fs';
import { rpcClient } from './support/http';
import { createIdentity, startStackWithData, unwrap, type Stack } from './support/stack';
import type { Identity } from './support/identities';
import type { ResultOf } from '@quarry/client';

/*
 * The admin API through JSON-RPC on the real server: USERS.* (users:admin, an admin's token) and
 * TOKENS.CREATE/FIND/REVOKE (tokens:write), every method and option end to end, the refusals a hostile or
 * careless caller meets, and the audit trail and logs that must show the calls but never a clear token.
 */

let stack: Stack;
let root: Identity;
let analyst: Identity;

const ADMIN_SCOPES = 'query:execute,indexes:read,reports:read,users:admin,tokens:write';

beforeAll(async () => {
  stack = await startStackWithData();
  root = await createIdentity(stack.dataDir, 'root', { admin: true, scopes: ADMIN_SCOPES });
  analyst = await createIdentity(stack.dataDir, 'analyst', { scopes: 'query:execute,indexes:read,tokens:write' });
}, 120000);

afterAll(async () => {
  await stack?.quarry.stop();
});

const rpc = async <T>(token: string, method: string, params: unknown) =>
  unwrap<T>(await rpcClient(stack.quarry.baseUrl, token).call(method, params));
const ok = async <T>(token: string, method: string, params: unknown): Promise<T> => {
  const { data, error } = await rpc<T>(token, method, params);
  if (error) throw new Error(`${method}: ${error.code} ${error.data.detail}`);
  return data as T;
};
const refused = async (token: string, method: string, params: unknown) => {
  const { data, error } = await rpc(token, method, params);
  expect(data).toBeUndefined();
  return { code: error!.code, detail: error!.data.detail };
};
const search = (token: string) =>
  rpcClient(stack.quarry.baseUrl, token).call('QUERIES.EXECUTE', { index: 'movies', query: '*', pageSize: 3 });

type User = ResultOf<'USERS.CREATE'>;
type Made = ResultOf<'TOKENS.CREATE'>;

describe('USERS.*', () => {
  it('creates, finds, updates, disables, enables and deletes a user, with realms as index → queries', async () => {
    const made = await ok<User>(root.token, 'USERS.CREATE', {
      name: 'ada@example.com',
      indexes: ['movies'],
      realms: { movies: ['(Major Genre):Drama', 'Title:*'] },
    });
    expect(made).toEqual({
      name: 'ada@example.com',
      status: 'active',
      admin: false,
      indexes: ['movies'],
      realms: { movies: ['(Major Genre):Drama', 'Title:*'] },
      createdAt: expect.stringMatching(/Z$/),
    });
    expect(await ok(root.token, 'USERS.FIND', { name: 'ada@example.com' })).toEqual({ users: [made] });
    const all = await ok<{ users: User[] }>(root.token, 'USERS.FIND', {});
    expect(all.users.map((u) => u.name)).toEqual(expect.arrayContaining(['ada@example.com', 'analyst', 'root']));
    // The CLI reads the same store.
    expect((await stack.cli(['user', 'list'])).stdout).toMatch(/ada@example\.com\s+active/);

    const updated = await ok<User>(root.token, 'USERS.UPDATE', {
      name: 'ada@example.com',
      indexes: ['movies', 'flights'],
      realms: { flights: ['origin:LAX'] },
    });
    expect([updated.indexes, updated.realms, updated.createdAt]).toEqual([
      ['movies', 'flights'],
      { flights: ['origin:LAX'] },
      made.createdAt,
    ]);
    expect(
      (await ok<User>(root.token, 'USERS.UPDATE', { name: 'ada@example.com', admin: true, realms: {} })).admin,
    ).toBe(true);
    expect((await ok<User>(root.token, 'USERS.DISABLE', { name: 'ada@example.com' })).status).toBe('disabled');
    expect((await ok<User>(root.token, 'USERS.DISABLE', { name: 'ada@example.com' })).status).toBe('disabled');
    expect((await ok<User>(root.token, 'USERS.ENABLE', { name: 'ada@example.com' })).status).toBe('active');
    expect(await ok(root.token, 'USERS.DELETE', { name: 'ada@example.com' })).toEqual({
      name: 'ada@example.com',
      deleted: true,
    });
    expect(await refused(root.token, 'USERS.FIND', { name: 'ada@example.com' })).toEqual({
      code: 404,
      detail: 'User "ada@example.com" not found',
    });
    expect((await refused(root.token, 'USERS.DELETE', { name: 'ada@example.com' })).code).toBe(404);
  });

  it('a user made here reads only the rows of their realm, through a token made here', async () => {
    await ok(root.token, 'USERS.CREATE', {
      name: 'drama-fan',
      indexes: ['movies'],
      realms: { movies: ['(Major Genre):Drama'] },
    });
    // An admin token may make another user's token, never with more than it holds itself.
    const made = await ok<Made>(root.token, 'TOKENS.CREATE', { user: 'drama-fan', scopes: ['query:execute'] });
    expect(made.user).toBe('drama-fan');
    const res = await search(made.token);
    const body = res.json as { result: { data: { total: number; records: Array<Record<string, unknown>> } } };
    expect(body.result.data.total).toBeGreaterThan(0);
    expect(body.result.data.records.every((r) => r['Major Genre'] === 'Drama')).toBe(true);
  });

  it('refuses a non-admin: without the scope, and with the scope but not an admin user', async () => {
    expect(await refused(analyst.token, 'USERS.FIND', {})).toEqual({
      code: 403,
      detail: 'Token lacks the required scope "users:admin"',
    });
    const scoped = await createIdentity(stack.dataDir, 'scoped-non-admin', { scopes: 'users:admin,tokens:write' });
    for (const [method, params] of [
      ['USERS.CREATE', { name: 'mallory' }],
      ['USERS.UPDATE', { name: 'analyst', admin: true }],
      ['USERS.FIND', {}],
      ['USERS.DISABLE', { name: 'root' }],
      ['USERS.ENABLE', { name: 'root' }],
      ['USERS.DELETE', { name: 'root' }],
    ] as const)
      expect(await refused(scoped.token, method, params)).toEqual({
        code: 403,
        detail: `Only an admin user may manage users; the token's user "scoped-non-admin" is not an admin`,
      });
    expect((await ok<{ users: User[] }>(root.token, 'USERS.FIND', { name: 'root' })).users[0]).toMatchObject({
      status: 'active',
      admin: true,
    });
    expect(await refused(root.token, 'USERS.FIND', { name: 'mallory' })).toMatchObject({ code: 404 });
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['odd characters', 'a b'],
    ['a quote', 'o"brien'],
    ['a slash', 'x/y'],
    ['a newline', 'x\ny'],
    ['huge', 'a'.repeat(101)],
    ['far too huge', 'a'.repeat(100_000)],
  ])('refuses a user name that is %s with a 400 naming `name`', async (_label, name) => {
    const { code, detail } = await refused(root.token, 'USERS.CREATE', { name });
    expect(code).toBe(400);
    expect(detail).toMatch(/^name /);
    expect(detail.length).toBeLessThan(300);
  });

  it('takes the longest name and every character the CLI takes', async () => {
    const name = `a.b_c@d-${'e'.repeat(92)}`;
    expect((await ok<User>(root.token, 'USERS.CREATE', { name })).name).toBe(name);
  });

  it.each([
    ['does not parse', { movies: ['(Title:'] }, ['movies'], false, /^realms\.movies\[0\]: /],
    ['names an unknown field', { movies: ['Nope:x'] }, ['movies'], false, /^realms\.movies\[0\]: Unknown field "Nope"/],
    ['is blank', { movies: ['  '] }, ['movies'], false, /^realms\.movies\[0\] is required/],
    [
      'is on an index not given',
      { flights: ['origin:LAX'] },
      ['movies'],
      false,
      /^realms\.flights: names an index the user is not given/,
    ],
    ['is on an admin', { movies: ['Title:x'] }, ['*'], true, /no effect on an admin/],
    ['has no query', { movies: [] }, ['movies'], false, /^realms\.movies needs at least one query/],
    ['is not a list', { movies: 'Title:x' }, ['movies'], false, /^realms\.movies must be an array/],
    ['names no index', { 'bad name!': ['Title:x'] }, ['*'], false, /realms/],
  ])('refuses a realm that %s, and creates no user', async (_label, realms, indexes, admin, detail) => {
    const res = await refused(root.token, 'USERS.CREATE', { name: 'realm-case', indexes, realms, admin });
    expect(res.code).toBe(400);
    expect(res.detail).toMatch(detail);
    expect((await refused(root.token, 'USERS.FIND', { name: 'realm-case' })).code).toBe(404);
  });

  it('takes a realm on an index not loaded yet, checked for syntax only (as the CLI does)', async () => {
    const u = await ok<User>(root.token, 'USERS.CREATE', {
      name: 'future-reader',
      indexes: ['not-loaded-yet'],
      realms: { 'not-loaded-yet': ['Region:EU'] },
    });
    expect(u.realms).toEqual({ 'not-loaded-yet': ['Region:EU'] });
  });

  it('refuses an admin disabling, demoting or deleting their own user', async () => {
    for (const [method, params] of [
      ['USERS.DISABLE', { name: 'root' }],
      ['USERS.DELETE', { name: 'root' }],
      ['USERS.UPDATE', { name: 'root', admin: false }],
    ] as const) {
      const res = await refused(root.token, method, params);
      expect(res.code).toBe(400);
      expect(res.detail).toContain('their own user');
    }
    expect((await search(root.token)).status).toBe(200);
  });

  it('two USERS.CREATE of one name at once: one user, one 409', async () => {
    const answers = await Promise.all(
      [1, 2].map(() => rpc<User>(root.token, 'USERS.CREATE', { name: 'twin', indexes: ['movies'] })),
    );
    expect(answers.filter((a) => a.data).length).toBe(1);
    expect(answers.find((a) => a.error)?.error).toMatchObject({
      code: 409,
      data: { detail: 'User "twin" already exists' },
    });
  });

  it('a disabled user’s tokens are refused on the very next call, with the spec’s 401; enabled, they work again', async () => {
    const victim = await createIdentity(stack.dataDir, 'soon-disabled', { scopes: 'query:execute' });
    expect((await search(victim.token)).status).toBe(200);
    await ok(root.token, 'USERS.DISABLE', { name: 'soon-disabled' });
    const res = await search(victim.token);
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ status: 401, detail: 'Token owner could not be resolved' });
    await ok(root.token, 'USERS.ENABLE', { name: 'soon-disabled' });
    expect((await search(victim.token)).status).toBe(200);
    await ok(root.token, 'USERS.DELETE', { name: 'soon-disabled' });
    expect((await search(victim.token)).status).toBe(401);
  });

  it('changes what a user reads from their next call on (USERS.UPDATE realms)', async () => {
    const reader = await createIdentity(stack.dataDir, 'realm-moves', { indexes: 'movies', scopes: 'query:execute' });
    const total = async () =>
      ((await search(reader.token)).json as { result: { data: { total: number } } }).result.data.total;
    const before = await total();
    await ok(root.token, 'USERS.UPDATE', { name: 'realm-moves', realms: { movies: ['(Major Genre):Drama'] } });
    const after = await total();
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(before);
  });
});

describe('TOKENS.CREATE, TOKENS.FIND, TOKENS.REVOKE', () => {
  it('makes a token of one’s own, shown once, that works, is listed without its secret and can be revoked', async () => {
    const made = await ok<Made>(analyst.token, 'TOKENS.CREATE', {
      scopes: ['query:execute'],
      expiresIn: '2h',
      name: 'nightly job',
    });
    expect(made).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^qk_[A-Za-z0-9]{43}$/),
      prefix: made.token.slice(0, made.prefix.length),
      user: 'analyst',
      scopes: ['query:execute'],
      expiresAt: expect.any(String),
      name: 'nightly job',
    });
    expect(Math.abs(Date.parse(made.expiresAt!) - Date.now() - 2 * 3600_000)).toBeLessThan(60_000);
    expect((await search(made.token)).status).toBe(200);
    // Only its scopes: it may not make tokens itself.
    expect(await refused(made.token, 'TOKENS.FIND', {})).toEqual({
      code: 403,
      detail: 'Token lacks the required scope "tokens:write"',
    });
    const listed = await ok<ResultOf<'TOKENS.FIND'>>(analyst.token, 'TOKENS.FIND', {});
    expect(listed.tokens.find((t) => t.id === made.id)).toEqual({
      id: made.id,
      user: 'analyst',
      prefix: made.prefix,
      scopes: ['query:execute'],
      createdAt: expect.any(String),
      expiresAt: made.expiresAt,
      status: 'active',
      name: 'nightly job',
    });
    expect(listed.tokens.find((t) => t.id === analyst.tokenId)).toMatchObject({ status: 'active', expiresAt: null });
    expect(JSON.stringify(listed)).not.toContain(made.token);
    expect(listed.tokens.every((t) => t.user === 'analyst')).toBe(true);
    // The CLI lists it, by its head only.
    const cli = await stack.cli(['token', 'list']);
    expect(cli.stdout).toContain(made.id);
    expect(cli.stdout).not.toContain(made.token);

    const revoked = await ok<ResultOf<'TOKENS.REVOKE'>>(analyst.token, 'TOKENS.REVOKE', { id: made.id });
    expect(revoked).toEqual({ id: made.id, revokedAt: expect.any(String) });
    const res = await search(made.token);
    expect([res.status, (res.json as { detail: string }).detail]).toEqual([401, 'Token revoked']);
    // Revoking twice answers the same, with the first time.
    expect(await ok(analyst.token, 'TOKENS.REVOKE', { id: made.id })).toEqual(revoked);
    expect(
      (await ok<ResultOf<'TOKENS.FIND'>>(analyst.token, 'TOKENS.FIND', {})).tokens.find((t) => t.id === made.id),
    ).toMatchObject({ status: 'revoked', revokedAt: revoked.revokedAt });
  });

  it('defaults to 30 days, and lists an expired token as expired', async () => {
    const made = await ok<Made>(analyst.token, 'TOKENS.CREATE', { scopes: ['indexes:read'] });
    expect(Math.abs(Date.parse(made.expiresAt!) - Date.now() - 30 * 86_400_000)).toBeLessThan(60_000);
    expect('name' in made).toBe(false);
    const brief = await ok<Made>(analyst.token, 'TOKENS.CREATE', { scopes: ['indexes:read'], expiresIn: '1s' });
    await new Promise((r) => setTimeout(r, 1200));
    const listed = await ok<ResultOf<'TOKENS.FIND'>>(analyst.token, 'TOKENS.FIND', {});
    expect(listed.tokens.find((t) => t.id === brief.id)?.status).toBe('expired');
    expect((await search(brief.token)).status).toBe(401);
  });

  it('never makes a token with a scope the calling token lacks, or outliving it', async () => {
    expect(await refused(analyst.token, 'TOKENS.CREATE', { scopes: ['query:execute', 'users:admin'] })).toEqual({
      code: 403,
      detail: 'Token lacks the scope "users:admin" the new token would carry',
    });
    expect(await refused(analyst.token, 'TOKENS.CREATE', { scopes: ['reports:write'] })).toMatchObject({ code: 403 });
    const short = await createIdentity(stack.dataDir, 'analyst', {
      scopes: 'query:execute,tokens:write',
      expiresIn: '1h',
    });
    const outliving = await refused(short.token, 'TOKENS.CREATE', { scopes: ['query:execute'], expiresIn: '2h' });
    expect(outliving.code).toBe(403);
    expect(outliving.detail).toContain('would outlive the calling token');
    // Left out, the expiry is the calling token's own.
    const capped = await ok<Made>(short.token, 'TOKENS.CREATE', { scopes: ['query:execute'] });
    expect(capped.expiresAt).toBe(short.expiresAt);
    for (const [params, detail] of [
      [{ scopes: [] }, /^scopes needs at least one scope/],
      [{ scopes: ['root'] }, /^scopes\[0\] must be one of/],
      [{ scopes: ['query:execute'], expiresIn: 'forever' }, /^expiresIn must be a duration/],
      [{ scopes: ['query:execute'], expiresIn: '999d' }, /^expiresIn must be a duration .* at most 366d/],
      [{ scopes: ['query:execute'], name: '' }, /^name is required/],
      [{ scopes: ['query:execute'], name: 'x'.repeat(101) }, /^name must be at most 100 characters/],
      [{ scopes: ['query:execute'], owner: 'root' }, /owner/],
    ] as const) {
      const res = await refused(analyst.token, 'TOKENS.CREATE', params);
      expect(res.code).toBe(400);
      expect(res.detail).toMatch(detail);
    }
  });

  it('another user’s tokens: refused to a non-admin (403 to name one, 404 for an id), open to an admin', async () => {
    const rootToken = await ok<Made>(root.token, 'TOKENS.CREATE', { scopes: ['query:execute'], name: 'root’s' });
    expect((await refused(analyst.token, 'TOKENS.CREATE', { user: 'root', scopes: ['query:execute'] })).code).toBe(403);
    expect((await refused(analyst.token, 'TOKENS.FIND', { user: 'root' })).code).toBe(403);
    // Another user's token id reads exactly as an unknown one.
    const theirs = await refused(analyst.token, 'TOKENS.REVOKE', { id: rootToken.id });
    const unknown = await refused(analyst.token, 'TOKENS.REVOKE', { id: '3f1c9a52-0000-4000-8000-000000000000' });
    expect(theirs).toEqual(unknown);
    expect(theirs).toEqual({ code: 404, detail: 'Token not found' });
    expect((await search(rootToken.token)).status).toBe(200);
    // An admin with users:admin sees and revokes anyone's.
    const analysts = await ok<ResultOf<'TOKENS.FIND'>>(root.token, 'TOKENS.FIND', { user: 'analyst' });
    expect(analysts.tokens.map((t) => t.id)).toContain(analyst.tokenId);
    expect(await refused(root.token, 'TOKENS.FIND', { user: 'nobody-here' })).toEqual({
      code: 404,
      detail: 'User "nobody-here" not found',
    });
    const victim = await createIdentity(stack.dataDir, 'revoked-by-admin', { scopes: 'query:execute' });
    await ok(root.token, 'TOKENS.REVOKE', { id: victim.tokenId });
    expect((await search(victim.token)).status).toBe(401);
  });

  it('revoking the calling token itself signs it out', async () => {
    const self = await createIdentity(stack.dataDir, 'analyst', { scopes: 'tokens:write' });
    await ok(self.token, 'TOKENS.REVOKE', { id: self.tokenId });
    const res = await rpcClient(stack.quarry.baseUrl, self.token).call('TOKENS.FIND', {});
    expect(res.status).toBe(401);
  });

  it('an embed token may call none of the admin API', async () => {
    const issuer = await createIdentity(stack.dataDir, 'embedder', {
      scopes: 'query:execute,embed:create,tokens:write',
    });
    const embed = await ok<{ token: string }>(issuer.token, 'TOKENS.EMBED', { index: 'movies', ttlSeconds: 60 });
    for (const [method, params] of [
      ['TOKENS.CREATE', { scopes: ['query:execute'] }],
      ['TOKENS.FIND', {}],
      ['TOKENS.REVOKE', { id: issuer.tokenId }],
      ['USERS.FIND', {}],
    ] as const)
      expect((await refused(embed.token, method, params)).code).toBe(403);
    expect((await search(issuer.token)).status).toBe(200);
  });
});

describe('the audit trail and the logs', () => {
  it('record every admin call with its method and outcome, and never a clear token', async () => {
    const made = await ok<Made>(root.token, 'TOKENS.CREATE', { scopes: ['query:execute'], name: 'audited' });
    await refused(analyst.token, 'USERS.FIND', {});
    await ok(root.token, 'TOKENS.REVOKE', { id: made.id });
    // The audit trail is written in batches every half second.
    let lines: Array<{ method: string; outcome: string; userName: string | null; target?: string }> = [];
    for (let i = 0; i < 50; i++) {
      const out = await stack.cli(['audit', '--json', '--limit', '1000']);
      lines = out.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as (typeof lines)[number]);
      if (lines.some((l) => l.method === 'TOKENS.REVOKE' && l.userName === 'root')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const seen = new Set(lines.map((l) => `${l.method} ${l.outcome}`));
    for (const call of [
      'USERS.CREATE ok',
      'USERS.CREATE 400',
      'USERS.CREATE 409',
      'USERS.UPDATE ok',
      'USERS.FIND ok',
      'USERS.FIND 403',
      'USERS.FIND 404',
      'USERS.DISABLE ok',
      'USERS.ENABLE ok',
      'USERS.DELETE ok',
      'USERS.DELETE 400',
      'TOKENS.CREATE ok',
      'TOKENS.CREATE 403',
      'TOKENS.FIND ok',
      'TOKENS.REVOKE ok',
      'TOKENS.REVOKE 404',
    ])
      expect([call, seen.has(call)]).toEqual([call, true]);
    // Each row names what the admin call acted on, not only who made it.
    expect(lines.find((l) => l.method === 'TOKENS.REVOKE' && l.outcome === 'ok')?.target).toBe(`token ${made.id}`);
    const userTargets = new Set(lines.filter((l) => l.method.startsWith('USERS.') && l.target).map((l) => l.method));
    for (const m of ['USERS.CREATE', 'USERS.UPDATE', 'USERS.DISABLE', 'USERS.ENABLE', 'USERS.DELETE'])
      expect([m, userTargets.has(m)]).toEqual([m, true]);
    expect(lines.every((l) => !l.target || /^(user|token) \S+$/.test(l.target))).toBe(true);
    const audit = (await stack.cli(['audit', '--json', '--limit', '5000'])).stdout;
    expect(audit).not.toContain(made.token);
    expect(stack.quarry.logs().join('\n')).not.toContain(made.token);
    // Nor anywhere in the data folder the store lives in, outside its hash.
    for (const file of fs.readdirSync(stack.dataDir).filter((f) => /\.(sqlite|db|log)/.test(f)))
      expect(fs.readFileSync(`${stack.dataDir}/${file}`).includes(made.token)).toBe(false);
  });
});

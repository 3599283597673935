import { createPublicKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT, decodeJwt } from 'jose';
import { exportCalls } from './support/exports';
import { rpcClient } from './support/http';
import { oidcSettings, startOidcProvider, type OidcProvider } from './support/oidc';
import { createIdentity, startStackWithData, unwrap, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * Sign-in with OpenID Connect end to end: a real OpenID provider (the `oidc-provider` package, started
 * here on loopback) issues JWT access tokens, and the gateway takes them as users (docs/identity.md). Two
 * tenants, each with a realm made from their token's `tenant` claim, see only their own rows in every
 * output; a claim that holds query syntax is matched as text; hostile tokens get the spec's 401 texts.
 */

const ORDERS = [
  ['acme', 'north', 10],
  ['acme', 'north', 20],
  ['acme', 'south', 5],
  ['acme', 'east', 7],
  ['acme', 'west', 1],
  ['acme', 'west', 2],
  ['globex', 'north', 100],
  ['globex', 'mars', 300],
  ['globex', 'mars', 400],
  ['globex', 'south', 50],
  ['globex', 'venus', 900],
] as const;
const own = (tenant: string) => ORDERS.filter((o) => o[0] === tenant);
const API_SCOPES = 'indexes:read query:execute reports:read embed:create tokens:write';

let provider: OidcProvider;
let stack: Stack;
let admin: Identity;
const jwt: Record<string, string> = {};
const as = (token: string): Identity => ({ user: decodeJwt(token).sub ?? '', token, tokenId: '' });

beforeAll(async () => {
  provider = await startOidcProvider();
  stack = await startStackWithData({ env: oidcSettings(provider) });
  admin = await createIdentity(stack.dataDir, 'root', {
    admin: true,
    scopes: 'indexes:read,indexes:write,query:execute,users:admin,tokens:write',
  });
  const csv = ['tenant,region,amount', ...ORDERS.map((o) => o.join(','))].join('\n') + '\n';
  const res = await fetch(`${stack.quarry.baseUrl}/indexes/orders/records?mode=replace`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'text/csv' },
    body: csv,
  });
  if (res.status !== 200) throw new Error(`upload: HTTP ${res.status} ${await res.text()}`);
  for (const client of ['tenant-a', 'tenant-b', 'tenant-evil']) jwt[client] = await provider.token(client, API_SCOPES);
}, 180_000);

afterAll(async () => {
  await stack?.quarry.stop();
  await provider?.stop();
});

const call = async <T>(token: string, method: string, params: unknown) =>
  unwrap<T>(await rpcClient(stack.quarry.baseUrl, token).call(method, params));
const data = async <T>(token: string, method: string, params: unknown): Promise<T> => {
  const res = await call<T>(token, method, params);
  if (res.error) throw new Error(`${method}: ${res.error.code} ${res.error.data.detail}`);
  return res.data as T;
};
/** A refusal before dispatch: the HTTP status and detail of its problem+json. */
const refusal = async (token: string) => {
  const res = await rpcClient(stack.quarry.baseUrl, token).call('QUERIES.EXECUTE', { index: 'orders' });
  expect(res.headers['content-type']).toBe('application/problem+json');
  return { status: res.status, detail: (res.json as { detail: string }).detail };
};
interface Search {
  total: number;
  records: Array<Record<string, unknown>>;
}
const search = (token: string, query = '*') =>
  data<Search>(token, 'QUERIES.EXECUTE', { index: 'orders', query, pageSize: 100, cache: false });

describe('OpenID Connect bearer JWTs from a real provider', () => {
  it('takes a provider’s token as user oidc:<sub>, made on first sight with its claims’ indexes and realm', async () => {
    const who = await data<{ user: string; scopes: string[]; token: { expiresAt: string } }>(
      jwt['tenant-a'],
      'TOKENS.WHOAMI',
      {},
    );
    expect(who.user).toBe('oidc:tenant-a');
    expect(who.scopes.sort()).toEqual(API_SCOPES.split(' ').sort());
    // The bearer ends when its JWT does.
    expect(Date.parse(who.token.expiresAt)).toBe((decodeJwt(jwt['tenant-a']).exp ?? 0) * 1000);
    const users = await data<{ users: Array<{ name: string; indexes: string[]; realms: Record<string, string[]> }> }>(
      admin.token,
      'USERS.FIND',
      { name: 'oidc:tenant-a' },
    );
    expect(users.users).toEqual([
      expect.objectContaining({
        name: 'oidc:tenant-a',
        indexes: ['orders', 'movies'],
        realms: { orders: ['tenant:=acme'] },
      }),
    ]);
  });

  it('shows each tenant only its rows in searches, whatever the query asks', async () => {
    for (const [client, tenant] of [
      ['tenant-a', 'acme'],
      ['tenant-b', 'globex'],
    ] as const) {
      const all = await search(jwt[client]);
      expect(all.total).toBe(own(tenant).length);
      expect(new Set(all.records.map((r) => r.tenant))).toEqual(new Set([tenant]));
      const other = tenant === 'acme' ? 'globex' : 'acme';
      expect(
        (await search(jwt[client], `tenant:${other} OR region:mars OR region:north`)).records.map((r) => r.tenant),
      ).toEqual(expect.not.arrayContaining([other]));
    }
    // Another index the claims give has no realm.
    expect((await data<Search>(jwt['tenant-a'], 'QUERIES.EXECUTE', { index: 'movies', pageSize: 1 })).total).toBe(3201);
  });

  it('matches a claim holding query syntax as text: the realm reads nothing, never every row', async () => {
    expect((await search(jwt['tenant-evil'])).total).toBe(0);
    const users = await data<{ users: Array<{ realms: Record<string, string[]> }> }>(admin.token, 'USERS.FIND', {
      name: 'oidc:tenant-evil',
    });
    expect(users.users[0]!.realms.orders).toEqual(['tenant:=\\*\\ OR\\ tenant\\:globex']);
  });

  it('keeps each tenant to its rows in crosstab cells, drill queries and the Other row', async () => {
    for (const [client, tenant] of [
      ['tenant-a', 'acme'],
      ['tenant-b', 'globex'],
    ] as const) {
      const t = (
        await data<{
          data: {
            rows: Array<{ key: string[]; query?: string; total: number[]; other?: number }>;
            grandTotal: number[];
          };
        }>(jwt[client], 'CROSSTAB.EXECUTE', {
          index: 'orders',
          format: 'json',
          cache: false,
          rows: ['region'],
          columns: [],
          totals: [
            { name: 'Amount', aggregationType: 'Sum', field: 'amount' },
            { name: 'N', aggregationType: 'Count' },
          ],
          rowLimit: 2,
          otherRow: true,
          rowOrder: { by: 'value', measure: 1, direction: 'desc' },
        })
      ).data;
      const rows = own(tenant);
      expect(t.grandTotal).toEqual([rows.reduce((s, r) => s + r[2], 0), rows.length]);
      const regions = new Set(rows.map((r) => r[1]));
      const kept = t.rows.filter((r) => r.other === undefined);
      for (const r of kept) {
        expect(regions.has(r.key[0] as never)).toBe(true);
        expect(r.total[1]).toBe(rows.filter((o) => o[1] === r.key[0]).length);
        // The drill query, run back as the same user, counts the cell.
        expect((await search(jwt[client], r.query!)).total).toBe(r.total[1]);
      }
      const other = t.rows.find((r) => r.other !== undefined)!;
      expect(other.total[1]).toBe(rows.length - kept.reduce((s, r) => s + r.total[1]!, 0));
      expect(other.other).toBe(regions.size - kept.length);
    }
  });

  it('exports only the tenant’s rows', async () => {
    const exports = exportCalls(() => stack.quarry.baseUrl);
    for (const [client, tenant] of [
      ['tenant-a', 'acme'],
      ['tenant-b', 'globex'],
    ] as const) {
      const who = as(jwt[client]);
      const id = await exports.start(who, { method: 'QUERIES.EXECUTE', params: { index: 'orders' }, format: 'csv' });
      expect((await exports.finished(who, id)).state).toBe('done');
      const res = await exports.download(who, id);
      const lines = res.text.trim().split(/\r?\n/).slice(1);
      expect(lines).toHaveLength(own(tenant).length);
      expect(lines.every((l) => l.startsWith(`${tenant},`))).toBe(true);
    }
  });

  it('keeps each tenant to its rows over MCP, and in the embed tokens it issues', async () => {
    for (const [client, tenant] of [
      ['tenant-a', 'acme'],
      ['tenant-b', 'globex'],
    ] as const) {
      const mcp = new Client({ name: 'quarry-oidc-test', version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.quarry.baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${jwt[client]}` } },
        }),
      );
      try {
        const r = (await mcp.callTool({
          name: 'queries_execute',
          arguments: { index: 'orders', pageSize: 100 },
        })) as unknown as { structuredContent: Search };
        expect(r.structuredContent.total).toBe(own(tenant).length);
        expect(new Set(r.structuredContent.records.map((x) => x.tenant))).toEqual(new Set([tenant]));
      } finally {
        await mcp.close();
      }
      const embed = await data<{ token: string }>(jwt[client], 'TOKENS.EMBED', { index: 'orders', ttlSeconds: 600 });
      const seen = await search(embed.token);
      expect(seen.total).toBe(own(tenant).length);
      expect(new Set(seen.records.map((x) => x.tenant))).toEqual(new Set([tenant]));
    }
  });

  it('follows the scopes of the latest token, and refuses one with no Quarry scope with the spec’s 403', async () => {
    const narrow = await provider.token('tenant-b', 'indexes:read');
    const refused = await call(narrow, 'QUERIES.EXECUTE', { index: 'orders' });
    expect(refused.error?.code).toBe(403);
    expect((await data<{ scopes: string[] }>(narrow, 'TOKENS.WHOAMI', {})).scopes).toEqual(['indexes:read']);
    // Its sign-in token follows too: the wider JWT widens it again.
    expect((await data<{ scopes: string[] }>(jwt['tenant-b'], 'TOKENS.WHOAMI', {})).scopes.length).toBe(
      API_SCOPES.split(' ').length,
    );
  });

  it('refuses a disabled user, and lets them in again once enabled', async () => {
    await data(admin.token, 'USERS.DISABLE', { name: 'oidc:tenant-b' });
    expect(await refusal(jwt['tenant-b'])).toEqual({ status: 401, detail: 'Token owner could not be resolved' });
    await data(admin.token, 'USERS.ENABLE', { name: 'oidc:tenant-b' });
    expect((await search(jwt['tenant-b'])).total).toBe(own('globex').length);
  });

  it('lists the sign-in token but will not revoke it on its own, and bounds tokens made with a JWT by its expiry', async () => {
    const mine = await data<{ tokens: Array<{ id: string; prefix: string; name?: string; expiresAt: string | null }> }>(
      jwt['tenant-a'],
      'TOKENS.FIND',
      {},
    );
    const signIn = mine.tokens.find((t) => t.prefix === 'oidc')!;
    expect(signIn).toMatchObject({ name: 'OpenID Connect sign-in', expiresAt: null });
    const revoke = await call(jwt['tenant-a'], 'TOKENS.REVOKE', { id: signIn.id });
    expect(revoke.error?.data.detail).toMatch(/OpenID Connect sign-in; it ends with its user \(USERS\.DISABLE\)/);
    const wide = await call(jwt['tenant-a'], 'TOKENS.CREATE', { scopes: ['query:execute'], expiresIn: '30d' });
    expect(wide.error?.data.detail).toMatch(/would outlive the calling token/);
    const made = await data<{ token: string; expiresAt: string }>(jwt['tenant-a'], 'TOKENS.CREATE', {
      scopes: ['query:execute'],
      expiresIn: '10m',
    });
    // An API token made by a signed-in user holds their realm.
    expect((await search(made.token)).total).toBe(own('acme').length);
  });
});

describe('hostile bearer JWTs get the spec’s 401', () => {
  const notFound = { status: 401, detail: 'Token not found or invalid' };
  const refusedWith = refusal;
  const payload = () => decodeJwt(jwt['tenant-a']);
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

  it('alg none', async () => {
    expect(await refusedWith(`${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(payload())}.`)).toMatchObject(notFound);
  });

  it('HS256 signed with the provider’s public key, in every form a confused verifier might use', async () => {
    const [key] = await provider.keys();
    const pub = createPublicKey({ key: key as JsonWebKey, format: 'jwk' });
    for (const secret of [
      Buffer.from(pub.export({ type: 'spki', format: 'pem' }) as string),
      Buffer.from(JSON.stringify(key)),
    ]) {
      const forged = await new SignJWT(payload())
        .setProtectedHeader({ alg: 'HS256', kid: String(key!.kid) })
        .sign(secret);
      expect(await refusedWith(forged)).toMatchObject(notFound);
    }
  });

  it('a kid that points at the provider’s key on a token another key signed', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const [key] = await provider.keys();
    const forged = await new SignJWT(payload())
      .setProtectedHeader({ alg: 'RS256', kid: String(key!.kid) })
      .sign(privateKey);
    expect(await refusedWith(forged)).toMatchObject(notFound);
  });

  it('the provider’s token for another audience, and a token from another issuer', async () => {
    expect(await refusedWith(await provider.token('tenant-a', API_SCOPES, 'urn:other:api'))).toMatchObject(notFound);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const elsewhere = await new SignJWT({ ...payload(), iss: 'http://127.0.0.1:9/' })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(privateKey);
    expect(await refusedWith(elsewhere)).toMatchObject(notFound);
  });

  it('a tampered payload, and a huge token', async () => {
    const [h, , s] = jwt['tenant-a'].split('.');
    expect(await refusedWith(`${h}.${b64({ ...payload(), tenant: 'globex' })}.${s}`)).toMatchObject(notFound);
    expect(await refusedWith(`${h}.${'A'.repeat(15_000)}.${s}`)).toMatchObject(notFound);
    // Past the server's header limit it never reaches the verifier.
    const huge = await rpcClient(stack.quarry.baseUrl, `${h}.${'A'.repeat(40_000)}.${s}`).call('QUERIES.EXECUTE', {});
    expect(huge.status).toBe(431);
  });
});

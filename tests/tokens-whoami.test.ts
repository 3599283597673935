import { rawRequest, rpcClient } from './support/http';
import { createIdentity, startStackWithData, unwrap, type Stack } from './support/stack';
import { withStore } from './support/identities';
import { revokeToken } from '../apps/quarry/src/commands/identity.commands';
import { QuarryClient, type ResultOf } from '@quarry/client';

/*
 * TOKENS.WHOAMI through JSON-RPC: who a token belongs to, with no scope needed, for every kind of caller
 * that may and may not ask.
 */

type Whoami = ResultOf<'TOKENS.WHOAMI'>;

let stack: Stack;

beforeAll(async () => {
  stack = await startStackWithData();
}, 120000);

afterAll(async () => {
  await stack?.quarry.stop();
});

const whoami = async (token: string, params: unknown = {}) =>
  unwrap<Whoami>(await rpcClient(stack.quarry.baseUrl, token).call('TOKENS.WHOAMI', params));

describe('TOKENS.WHOAMI', () => {
  it('names the user, what the user reads and the token, whatever scope the token holds', async () => {
    const ana = await createIdentity(stack.dataDir, 'whoami-ana', {
      indexes: 'movies,cars',
      realms: [{ index: 'movies', query: '(Major Genre):Drama' }],
      scopes: 'reports:read',
      expiresIn: '2d',
    });
    const { data, error } = await whoami(ana.token);
    expect(error).toBeUndefined();
    const expiresAt = Date.parse(data!.token.expiresAt ?? '');
    expect(Math.abs(expiresAt - (Date.now() + 2 * 86_400_000))).toBeLessThan(120_000);
    expect({ ...data!, token: { ...data!.token, expiresAt: 'checked' } }).toEqual({
      user: 'whoami-ana',
      admin: false,
      indexes: ['movies', 'cars'],
      realms: [{ index: 'movies', query: '(Major Genre):Drama' }],
      scopes: ['reports:read'],
      token: { id: ana.tokenId, prefix: ana.token.slice(0, data!.token.prefix.length), expiresAt: 'checked' },
    });
    expect(data!.token.prefix.length).toBeGreaterThanOrEqual(6);
    // The prefix tells tokens apart; it is never the secret.
    expect(data!.token.prefix.length).toBeLessThan(ana.token.length / 2);
  });

  it('tells two tokens of one user apart, and an admin reads every index', async () => {
    const first = await createIdentity(stack.dataDir, 'whoami-admin', { admin: true });
    const second = await createIdentity(stack.dataDir, 'whoami-admin', { scopes: 'query:execute' });
    const a = (await whoami(first.token)).data!;
    const b = (await whoami(second.token)).data!;
    expect([a.user, b.user, a.admin]).toEqual(['whoami-admin', 'whoami-admin', true]);
    expect(a.token.id).not.toBe(b.token.id);
    expect([a.token.expiresAt, b.scopes]).toEqual([null, ['query:execute']]);
  });

  it('through the typed client, as an integrator calls it', async () => {
    const bob = await createIdentity(stack.dataDir, 'whoami-bob', { indexes: 'movies' });
    const me = await new QuarryClient({ url: stack.quarry.baseUrl, token: bob.token }).tokens.whoami();
    expect([me.user, me.indexes]).toEqual(['whoami-bob', ['movies']]);
  });

  it('refuses what is not a live API token, and params it does not take', async () => {
    const eve = await createIdentity(stack.dataDir, 'whoami-eve', { indexes: 'movies' });
    expect((await whoami(eve.token, { user: 'someone-else' })).error).toMatchObject({
      code: 400,
      data: { detail: expect.stringContaining('user') },
    });
    const embed = unwrap<{ token: string }>(
      await rpcClient(stack.quarry.baseUrl, eve.token).call('TOKENS.EMBED', { index: 'movies', ttlSeconds: 60 }),
    ).data!;
    expect((await whoami(embed.token)).error).toMatchObject({ code: 403 });
    const noToken = await rawRequest(stack.quarry.baseUrl, {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'TOKENS.WHOAMI', params: {} }),
    });
    expect(noToken.status).toBe(401);
    await withStore(stack.dataDir, (store) => revokeToken(store, eve.tokenId));
    const revoked = await rpcClient(stack.quarry.baseUrl, eve.token).call('TOKENS.WHOAMI', {});
    // Authentication failures are HTTP problems (RFC 9457), before any JSON-RPC.
    expect([revoked.status, revoked.headers['content-type'], (revoked.json as { detail?: string }).detail]).toEqual([
      401,
      'application/problem+json',
      'Token revoked',
    ]);
  });
});

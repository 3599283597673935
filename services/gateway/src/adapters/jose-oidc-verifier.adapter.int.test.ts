import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';
import { JoseOidcVerifier } from './jose-oidc-verifier.adapter';

/*
 * The verifier against a real HTTP provider on loopback (its discovery document and key set), every
 * answer of which the test sets: rotation, an unknown kid, a key set that hangs or answers garbage.
 */

interface Provider {
  issuer: string;
  /** What the key set answers next: keys, garbage, or nothing at all (a hang). */
  jwks: { mode: 'keys'; keys: JWK[] } | { mode: 'garbage' } | { mode: 'hang' };
  fetches: number;
  close(): Promise<void>;
}

async function startProvider(): Promise<Provider> {
  const provider: Provider = { issuer: '', jwks: { mode: 'keys', keys: [] }, fetches: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: provider.issuer, jwks_uri: `${provider.issuer}/jwks` }));
      return;
    }
    if (req.url === '/jwks') {
      provider.fetches += 1;
      const j = provider.jwks;
      if (j.mode === 'hang') return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(j.mode === 'garbage' ? '{"keys": "not a list"' : JSON.stringify({ keys: j.keys }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  provider.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return provider;
}

async function keyPair(kid: string): Promise<{ kid: string; privateKey: KeyLike; jwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

describe('JoseOidcVerifier against a provider on loopback', () => {
  let provider: Provider;
  let first: Awaited<ReturnType<typeof keyPair>>;
  let second: Awaited<ReturnType<typeof keyPair>>;
  let clock: number;
  const AUDIENCE = 'quarry';

  const token = (
    key: Awaited<ReturnType<typeof keyPair>>,
    over: { iss?: string; aud?: string; exp?: number; nbf?: number; sub?: string } = {},
  ) => {
    const now = Math.floor(clock / 1000);
    const jwt = new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(over.iss ?? provider.issuer)
      .setAudience(over.aud ?? AUDIENCE)
      .setSubject(over.sub ?? 'alice')
      .setIssuedAt(now)
      .setExpirationTime(over.exp ?? now + 300);
    if (over.nbf !== undefined) jwt.setNotBefore(over.nbf);
    return jwt.sign(key.privateKey);
  };
  const verifier = (opts: Partial<ConstructorParameters<typeof JoseOidcVerifier>[0]> = {}) =>
    new JoseOidcVerifier({
      issuer: provider.issuer,
      audience: AUDIENCE,
      fetchTimeoutMs: 300,
      cooldownMs: 10_000,
      maxAgeMs: 600_000,
      now: () => clock,
      ...opts,
    });

  beforeAll(async () => {
    provider = await startProvider();
    first = await keyPair('k1');
    second = await keyPair('k2');
  });
  afterAll(async () => {
    await provider?.close();
  });
  beforeEach(() => {
    clock = Date.now();
    provider.jwks = { mode: 'keys', keys: [first.jwk] };
    provider.fetches = 0;
  });

  it('accepts a token the provider signed, with its subject and claims', async () => {
    const v = verifier();
    expect(await v.verify(await token(first))).toMatchObject({
      ok: true,
      identity: { subject: 'alice', claims: { tenant: 'acme', aud: AUDIENCE } },
    });
    // The keys are held: a second token costs no fetch.
    await v.verify(await token(first, { sub: 'bob' }));
    expect(provider.fetches).toBe(1);
  });

  it('refuses alg none, and HS256 signed with the provider’s public key', async () => {
    const v = verifier();
    const payload = Buffer.from(
      JSON.stringify({ iss: provider.issuer, aud: AUDIENCE, sub: 'mallory', exp: Math.floor(clock / 1000) + 300 }),
    ).toString('base64url');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    expect(await v.verify(none)).toEqual({
      ok: false,
      expired: false,
      reason: 'alg none is not an asymmetric algorithm',
    });
    const publicPem = new TextEncoder().encode(JSON.stringify(first.jwk));
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(provider.issuer)
      .setAudience(AUDIENCE)
      .setSubject('mallory')
      .setExpirationTime(Math.floor(clock / 1000) + 300)
      .sign(publicPem);
    expect(await v.verify(hs)).toMatchObject({ ok: false, reason: 'alg HS256 is not an asymmetric algorithm' });
    expect(await v.verify('not.a.jwt')).toMatchObject({ ok: false });
  });

  it('refuses the wrong issuer or audience, an expired token and one not valid yet, with a small skew', async () => {
    const v = verifier({ clockToleranceS: 30 });
    expect(await v.verify(await token(first, { iss: 'https://evil.example.com' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/iss/),
    });
    expect(await v.verify(await token(first, { aud: 'someone-else' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/aud/),
    });
    const now = Math.floor(clock / 1000);
    expect(await v.verify(await token(first, { exp: now - 60 }))).toEqual({
      ok: false,
      expired: true,
      reason: 'expired',
    });
    expect(await v.verify(await token(first, { exp: now - 10 }))).toMatchObject({ ok: true });
    expect(await v.verify(await token(first, { nbf: now + 120 }))).toMatchObject({
      ok: false,
      expired: false,
      reason: expect.stringMatching(/nbf/),
    });
  });

  it('follows a key rotation, and fetches for an unknown kid at most once per cooldown', async () => {
    const v = verifier();
    expect((await v.verify(await token(first))).ok).toBe(true);
    provider.jwks = { mode: 'keys', keys: [first.jwk, second.jwk] };
    clock += 11_000;
    expect((await v.verify(await token(second))).ok).toBe(true);
    expect(provider.fetches).toBe(2);
    // A kid that points nowhere: one fetch, then none until the cooldown has passed.
    const stranger = await keyPair('k-elsewhere');
    clock += 11_000;
    expect((await v.verify(await token(stranger))).ok).toBe(false);
    for (let i = 0; i < 5; i++) expect((await v.verify(await token(stranger))).ok).toBe(false);
    expect(provider.fetches).toBe(3);
    // Keys the provider dropped are dropped too at the next fetch.
    provider.jwks = { mode: 'keys', keys: [second.jwk] };
    clock += 601_000;
    expect((await v.verify(await token(first))).ok).toBe(false);
    expect((await v.verify(await token(second))).ok).toBe(true);
  });

  it('keeps the last good keys when the key set hangs or answers garbage, and never waits past its bound', async () => {
    const v = verifier();
    expect((await v.verify(await token(first))).ok).toBe(true);
    for (const mode of ['hang', 'garbage'] as const) {
      provider.jwks = { mode };
      clock += 601_000;
      const started = Date.now();
      expect(await v.verify(await token(first))).toMatchObject({ ok: true, identity: { subject: 'alice' } });
      // The fetch bound is 300 ms: the call waits no longer than that (generously bounded for a busy machine).
      expect(Date.now() - started).toBeLessThan(10_000);
    }
    // With no good keys ever fetched, a hanging provider refuses the token, within the bound.
    provider.jwks = { mode: 'hang' };
    const fresh = verifier();
    expect(await fresh.verify(await token(first))).toEqual({
      ok: false,
      expired: false,
      reason: 'the provider’s keys could not be fetched',
    });
  });
});

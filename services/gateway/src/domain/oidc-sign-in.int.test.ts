import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sqliteFile } from '@quarry/metadata-store';
import { SqliteMetadataStore } from '@quarry/metadata-store/sqlite';
import type { OidcVerdict, OidcVerifier } from '../ports/oidc-verifier.port';
import { AuthenticateUseCase } from './authenticate.use-case';
import { OidcSignIn } from './oidc-sign-in';

/*
 * A sign-in on the real SQLite store, with a verifier that takes the claims as the token (the verifier's
 * own checks are tested against a provider in jose-oidc-verifier.adapter.int.test.ts and tests/oidc.test.ts).
 */

const ISSUER = 'https://id.example.com';
const EXP = Math.floor(Date.parse('2031-01-01T00:00:00Z') / 1000);

class ClaimsVerifier implements OidcVerifier {
  readonly issuer = ISSUER;
  accepts(token: string): boolean {
    return token.startsWith('eyJ');
  }
  async verify(token: string): Promise<OidcVerdict> {
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    if (claims.bad) return { ok: false, expired: claims.bad === 'expired', reason: String(claims.bad) };
    return { ok: true, identity: { subject: String(claims.sub), claims } };
  }
}
const jwt = (claims: Record<string, unknown>) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ exp: EXP, iss: ISSUER, ...claims })).toString('base64url')}.sig`;

let dir: string;
let store: SqliteMetadataStore;
let auth: AuthenticateUseCase;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-oidc-'));
  store = new SqliteMetadataStore(sqliteFile(dir));
  const signIn = new OidcSignIn(store, new ClaimsVerifier(), {
    userClaim: 'email',
    scopesClaim: 'scope',
    indexesClaim: 'indexes',
    realms: { orders: 'tenant:={tenant}' },
  });
  auth = new AuthenticateUseCase(
    store,
    undefined,
    () => Date.parse('2030-06-01T00:00:00Z'),
    undefined,
    undefined,
    signIn,
  );
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const ann = { email: 'ann@acme.example', scope: 'query:execute indexes:read', indexes: ['orders'], tenant: 'acme' };

describe('OidcSignIn on the SQLite store', () => {
  it('makes one user and one sign-in token however many first calls come at once', async () => {
    const all = await Promise.all(Array.from({ length: 12 }, () => auth.fromHeader(`Bearer ${jwt(ann)}`)));
    expect(new Set(all.map((p) => p.user.id)).size).toBe(1);
    expect(new Set(all.map((p) => p.tokenId)).size).toBe(1);
    expect((await store.listUsers()).map((u) => u.name)).toEqual(['oidc:ann@acme.example']);
    const tokens = await store.listTokens();
    expect(tokens).toEqual([
      expect.objectContaining({
        prefix: 'oidc',
        hash: `oidc:${all[0]!.user.id}`,
        expiresAt: null,
        name: 'OpenID Connect sign-in',
      }),
    ]);
    expect(all[0]!.user).toMatchObject({ indexes: ['orders'], realms: [{ index: 'orders', query: 'tenant:=acme' }] });
    expect(all[0]!.token).toEqual({ prefix: 'oidc', expiresAt: new Date(EXP * 1000).toISOString() });
  });

  it('keeps what the latest token said, and what runs later as the user (a schedule) gets exactly that', async () => {
    const first = await auth.fromHeader(`Bearer ${jwt(ann)}`);
    const later = await auth.fromHeader(
      `Bearer ${jwt({ ...ann, scope: 'reports:read', indexes: ['orders', 'movies'], tenant: 'globex' })}`,
    );
    expect(later.tokenHash).toBe(first.tokenHash);
    // A schedule stores the token hash and runs through it: the user's rights of their latest sign-in.
    const scheduled = await auth.fromTokenHash(first.tokenHash);
    expect([...scheduled.scopes]).toEqual(['reports:read']);
    expect(scheduled.user).toMatchObject({
      indexes: ['orders', 'movies'],
      realms: [{ index: 'orders', query: 'tenant:=globex' }],
    });
    await store.setUserStatus('oidc:ann@acme.example', 'disabled');
    await expect(auth.fromTokenHash(first.tokenHash)).rejects.toMatchObject({
      detail: 'Token owner could not be resolved',
    });
  });

  it('refuses a disabled user, a revoked sign-in, a failed verification and a token without Quarry scope', async () => {
    const first = await auth.fromHeader(`Bearer ${jwt(ann)}`);
    await store.setUserStatus('oidc:ann@acme.example', 'disabled');
    const disabled = await auth.authenticate(`Bearer ${jwt(ann)}`);
    expect(disabled).toMatchObject({
      ok: false,
      error: { code: 'UNAUTHENTICATED', detail: 'Token owner could not be resolved' },
    });
    await store.setUserStatus('oidc:ann@acme.example', 'active');
    await store.revokeToken(first.tokenId);
    expect(await auth.authenticate(`Bearer ${jwt(ann)}`)).toMatchObject({
      ok: false,
      error: { detail: 'Token revoked' },
    });
    expect(await auth.authenticate(`Bearer ${jwt({ ...ann, bad: 'expired' })}`)).toMatchObject({
      ok: false,
      error: { detail: 'Token expired' },
      reason: 'expired',
    });
    expect(await auth.authenticate(`Bearer ${jwt({ ...ann, bad: 'signature' })}`)).toMatchObject({
      ok: false,
      error: { detail: 'Token not found or invalid' },
    });
    expect(await auth.authenticate(`Bearer ${jwt({ ...ann, email: 'bob@x', scope: 'openid profile' })}`)).toMatchObject(
      {
        ok: false,
        error: { code: 'FORBIDDEN', detail: 'Token has no recognised scope' },
      },
    );
    expect(
      await auth.authenticate(`Bearer ${jwt({ email: 'cy@x', scope: 'query:execute', indexes: ['orders'] })}`),
    ).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN', detail: 'Token claim "tenant" is missing: the realm of index "orders" needs it' },
    });
  });

  it('a user removed by an admin comes back as a new user on their next sign-in, without the old one’s token', async () => {
    const first = await auth.fromHeader(`Bearer ${jwt(ann)}`);
    await store.deleteUser('oidc:ann@acme.example');
    const again = await auth.fromHeader(`Bearer ${jwt(ann)}`);
    expect(again.user.id).not.toBe(first.user.id);
    expect(again.tokenHash).not.toBe(first.tokenHash);
    await expect(auth.fromTokenHash(first.tokenHash)).rejects.toMatchObject({
      detail: 'Token owner could not be resolved',
    });
  });

  it('an admin’s grant stands where the claims say nothing: no indexes claim keeps the stored indexes', async () => {
    const signIn = new OidcSignIn(store, new ClaimsVerifier(), { userClaim: 'sub', scopesClaim: 'scope', realms: {} });
    const plain = new AuthenticateUseCase(store, undefined, Date.now, undefined, undefined, signIn);
    await store.createUser({ name: 'oidc:zed', admin: true, indexes: ['*'], realms: [] });
    const p = await plain.fromHeader(`Bearer ${jwt({ sub: 'zed', scope: 'users:admin', indexes: ['none'] })}`);
    expect(p.user).toMatchObject({ name: 'oidc:zed', admin: true, indexes: ['*'] });
  });
});

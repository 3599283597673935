import { AppError } from '@quarry/errors';
import { hashToken, type Credential, type TokenRecord, type User } from '@quarry/metadata-store';
import { ManageTokensUseCase, type TokenStore } from './manage-tokens.use-case';
import type { Principal } from './principal';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const DAY = 86_400_000;
const user = (name: string, admin = false): User => ({
  id: `id-${name}`,
  name,
  status: 'active',
  admin,
  indexes: ['*'],
  realms: [],
  createdAt: '',
});
const ann = user('ann');
const root = user('root', true);
const bob = user('bob');

function memoryTokens(): TokenStore & { tokens: TokenRecord[] } {
  const tokens: TokenRecord[] = [];
  const users = [ann, root, bob];
  let n = 0;
  return {
    tokens,
    createToken: async (t) => {
      const record: TokenRecord = { ...t, id: `tok-${++n}`, createdAt: new Date(NOW).toISOString(), revokedAt: null };
      tokens.push(record);
      return { ...record };
    },
    findUserByName: async (name) => users.find((u) => u.name === name) ?? null,
    listUsers: async () => users,
    listTokens: async () => tokens.map((t) => ({ ...t })),
    findCredentialById: async (id): Promise<Credential | null> => {
      const token = tokens.find((t) => t.id === id);
      return token ? { token: { ...token }, owner: users.find((u) => u.id === token.userId) ?? null } : null;
    },
    revokeToken: async (id) => {
      const t = tokens.find((x) => x.id === id);
      if (!t) throw AppError.notFound('Token not found');
      t.revokedAt ??= new Date(NOW).toISOString();
      return { ...t };
    },
  };
}

const principal = (u: User, scopes: string[], expiresAt: string | null = null): Principal =>
  ({
    user: u,
    scopes: new Set(scopes),
    tokenId: 'caller',
    tokenHash: 'h',
    token: { prefix: 'qk_caller', expiresAt },
  }) as Principal;

const setup = () => {
  const store = memoryTokens();
  return { store, use: new ManageTokensUseCase(store, () => NOW) };
};
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof AppError ? { code: e.code, detail: e.detail } : e),
  );
const params = (p: {
  user?: string;
  scopes: Array<'query:execute' | 'tokens:write' | 'users:admin'>;
  expiresIn?: string;
  name?: string;
}) => ({
  ...p,
  expiresIn: p.expiresIn ?? '30d',
});

describe('ManageTokensUseCase', () => {
  const annP = principal(ann, ['query:execute', 'tokens:write']);

  it('makes a token of the caller’s own, keeps only its hash and head, and shows it once', async () => {
    const { use, store } = setup();
    const made = await use.create(annP, params({ scopes: ['query:execute', 'query:execute'], name: ' ci ' }), false);
    expect(made).toEqual({
      id: 'tok-1',
      token: expect.stringMatching(/^qk_[A-Za-z0-9]{43}$/),
      prefix: made.token.slice(0, 9),
      user: 'ann',
      scopes: ['query:execute'],
      expiresAt: new Date(NOW + 30 * DAY).toISOString(),
      name: 'ci',
    });
    expect(store.tokens[0].hash).toBe(hashToken(made.token));
    expect(JSON.stringify(store.tokens)).not.toContain(made.token);
    expect((await use.find(annP, undefined)).tokens).toEqual([
      {
        id: 'tok-1',
        user: 'ann',
        prefix: made.prefix,
        scopes: ['query:execute'],
        createdAt: new Date(NOW).toISOString(),
        expiresAt: made.expiresAt,
        status: 'active',
        name: 'ci',
      },
    ]);
  });

  it('never gives a scope the calling token lacks, nor an expiry past its own', async () => {
    const { use, store } = setup();
    expect(await refusal(use.create(annP, params({ scopes: ['users:admin'] }), false))).toEqual({
      code: 'FORBIDDEN',
      detail: 'Token lacks the scope "users:admin" the new token would carry',
    });
    const short = principal(ann, ['query:execute', 'tokens:write'], new Date(NOW + 2 * DAY).toISOString());
    expect(
      await refusal(use.create(short, params({ scopes: ['query:execute'], expiresIn: '3d' }), true)),
    ).toMatchObject({
      code: 'FORBIDDEN',
      detail: expect.stringContaining('would outlive the calling token'),
    });
    // The default gives way to the calling token's end.
    const made = await use.create(short, params({ scopes: ['query:execute'] }), false);
    expect(made.expiresAt).toBe(new Date(NOW + 2 * DAY).toISOString());
    expect(
      await refusal(use.create(annP, params({ scopes: ['query:execute'], expiresIn: '400d' }), true)),
    ).toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(store.tokens).toHaveLength(1);
  });

  it('another user’s tokens need users:admin and an admin user; without, 403 before any lookup', async () => {
    const { use } = setup();
    for (const p of [
      principal(ann, ['tokens:write', 'users:admin', 'query:execute']),
      principal(root, ['tokens:write', 'query:execute']),
    ]) {
      expect(await refusal(use.create(p, params({ user: 'bob', scopes: ['query:execute'] }), false))).toMatchObject({
        code: 'FORBIDDEN',
      });
      expect(await refusal(use.find(p, 'nobody'))).toMatchObject({ code: 'FORBIDDEN' });
    }
    const admin = principal(root, ['tokens:write', 'users:admin', 'query:execute']);
    expect((await use.create(admin, params({ user: 'bob', scopes: ['query:execute'] }), false)).user).toBe('bob');
    expect((await use.find(admin, 'bob')).tokens.map((t) => t.user)).toEqual(['bob']);
    expect(await refusal(use.find(admin, 'nobody'))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('revokes one’s own token; another user’s id reads as an unknown one; twice keeps the first time', async () => {
    const { use } = setup();
    const annToken = await use.create(annP, params({ scopes: ['query:execute'] }), false);
    const bobP = principal(bob, ['query:execute', 'tokens:write']);
    const unknown = await refusal(use.revoke(bobP, 'no-such-id'));
    expect(await refusal(use.revoke(bobP, annToken.id))).toEqual(unknown);
    expect(unknown).toEqual({ code: 'NOT_FOUND', detail: 'Token not found' });
    const first = await use.revoke(annP, annToken.id);
    expect(await use.revoke(annP, annToken.id)).toEqual(first);
    expect((await use.find(annP, undefined)).tokens[0]).toMatchObject({
      status: 'revoked',
      revokedAt: first.revokedAt,
    });
    const admin = principal(root, ['tokens:write', 'users:admin']);
    const other = await use.create(bobP, params({ scopes: ['query:execute'] }), false);
    expect((await use.revoke(admin, other.id)).id).toBe(other.id);
  });
});

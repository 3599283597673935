import { hashToken, type MetadataStore, type TokenRecord, type User } from '@quarry/metadata-store';
import { AUTH_FAILURES, AuthenticateUseCase } from './authenticate.use-case';

const user: User = { id: 'u1', name: 'ann', status: 'active', admin: false, indexes: ['*'], realms: [], createdAt: '' };
const token = 'qk_' + 'a'.repeat(43);
const record: TokenRecord = {
  id: 't1',
  userId: 'u1',
  hash: hashToken(token),
  prefix: 'qk_aaaaaa',
  scopes: ['query:execute', 'nonsense'],
  createdAt: '',
  expiresAt: null,
  revokedAt: null,
};

function storeWith(t: TokenRecord | null, u: User | null): MetadataStore {
  return {
    findCredential: async (h: string) =>
      t && t.hash === h ? { token: t, owner: u && u.id === t.userId ? u : null } : null,
  } as unknown as MetadataStore;
}

const NOW = Date.parse('2030-01-01T00:00:00Z');

describe('AuthenticateUseCase', () => {
  const run = (header: string | undefined, t: TokenRecord | null = record, u: User | null = user) =>
    new AuthenticateUseCase(storeWith(t, u), undefined, () => NOW).fromHeader(header);

  it('resolves the owner and keeps only recognised scopes', async () => {
    const p = await run(`Bearer ${token}`);
    expect(p.user.name).toBe('ann');
    expect([...p.scopes]).toEqual(['query:execute']);
  });

  it('accepts the scheme in any case', async () => {
    await expect(run(`bearer ${token}`)).resolves.toBeDefined();
  });

  it.each([
    [undefined, AUTH_FAILURES.headerInvalid],
    ['Token abc', AUTH_FAILURES.headerInvalid],
    ['Bearer', AUTH_FAILURES.emptyToken],
    ['Bearer qk_unknown', AUTH_FAILURES.notFound],
  ])('refuses %p', async (header, detail) => {
    await expect(run(header)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', detail });
  });

  it('refuses revoked, expired, ownerless and scopeless tokens in that order', async () => {
    await expect(
      run(`Bearer ${token}`, { ...record, revokedAt: 'x', expiresAt: '2000-01-01T00:00:00Z' }),
    ).rejects.toMatchObject({ detail: AUTH_FAILURES.revoked });
    await expect(run(`Bearer ${token}`, { ...record, expiresAt: '2030-01-01T00:00:00Z' })).rejects.toMatchObject({
      detail: AUTH_FAILURES.expired,
    });
    await expect(run(`Bearer ${token}`, { ...record, expiresAt: '2030-01-01T00:00:01Z' })).resolves.toBeDefined();
    await expect(run(`Bearer ${token}`, record, null)).rejects.toMatchObject({ detail: AUTH_FAILURES.ownerUnresolved });
    await expect(run(`Bearer ${token}`, record, { ...user, status: 'disabled' })).rejects.toMatchObject({
      detail: AUTH_FAILURES.ownerUnresolved,
    });
    await expect(run(`Bearer ${token}`, { ...record, scopes: ['x:y'] })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      detail: AUTH_FAILURES.noScope,
    });
  });
});

import type { Principal } from '../src/domain/principal';

/** The caller of the gateway's domain tests: user ana (every index, no realm) holding these scopes. */
export function principalWith(scopes: string[], embed?: Principal['embed']): Principal {
  return {
    user: {
      id: 'u1',
      name: 'ana',
      status: 'active',
      admin: false,
      indexes: ['*'],
      realms: [],
      createdAt: '2024-01-01T00:00:00Z',
    } as Principal['user'],
    scopes: new Set(scopes) as Principal['scopes'],
    tokenId: 't1',
    tokenHash: 'h1',
    ...(embed ? { embed } : {}),
  };
}

import { AppError } from '@quarry/errors';
import type { IndexEntry, User, UserChanges } from '@quarry/metadata-store';
import { ManageUsersUseCase, type UserStore } from './manage-users.use-case';
import type { Principal } from './principal';

/** The store's user part in memory, with the port's promises that matter here: unique names, NOT_FOUND. */
function memoryUsers(): UserStore & { users: Map<string, User> } {
  const users = new Map<string, User>();
  const get = (name: string) => {
    const u = users.get(name);
    if (!u) throw AppError.notFound(`User "${name}" not found`);
    return u;
  };
  return {
    users,
    createUser: async (u) => {
      if (users.has(u.name)) throw AppError.conflict(`User "${u.name}" already exists`);
      const user: User = { ...u, id: `id-${u.name}`, status: 'active', createdAt: '2030-01-01T00:00:00.000Z' };
      users.set(u.name, user);
      return structuredClone(user);
    },
    findUserByName: async (name) => structuredClone(users.get(name) ?? null),
    listUsers: async () => [...users.values()].sort((a, b) => a.name.localeCompare(b.name)),
    setUserStatus: async (name, status) => {
      const u = { ...get(name), status };
      users.set(name, u);
      return u;
    },
    updateUser: async (name, changes: UserChanges) => {
      const u = { ...get(name), ...changes };
      users.set(name, u);
      return u;
    },
    deleteUser: async (name) => {
      get(name);
      users.delete(name);
    },
  };
}

const movies: IndexEntry = {
  name: 'movies',
  fields: [
    { name: 'Title', type: 'string' },
    { name: 'Major Genre', type: 'string' },
  ],
} as IndexEntry;
const catalog = { getIndex: async (name: string) => (name === 'movies' ? movies : null) };

const principal = (user: Partial<User>, scopes: string[] = ['users:admin']): Principal =>
  ({
    user: {
      id: 'id-root',
      name: 'root',
      status: 'active',
      admin: true,
      indexes: ['*'],
      realms: [],
      createdAt: '',
      ...user,
    },
    scopes: new Set(scopes),
    tokenId: 't',
    tokenHash: 'h',
  }) as Principal;

const root = principal({});
const setup = () => {
  const store = memoryUsers();
  return { store, use: new ManageUsersUseCase(store, catalog, () => 0) };
};
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof AppError ? { code: e.code, detail: e.detail } : e),
  );

describe('ManageUsersUseCase', () => {
  it('creates a user with realms as index → queries and answers them the same way', async () => {
    const { use } = setup();
    const made = await use.create(root, {
      name: 'ada',
      indexes: ['movies', 'movies', 'later'],
      realms: { movies: ['(Major Genre):Drama', ' Title:Alien '], later: ['Anything:x'] },
      admin: false,
    });
    expect(made).toEqual({
      name: 'ada',
      status: 'active',
      admin: false,
      indexes: ['movies', 'later'],
      realms: { movies: ['(Major Genre):Drama', 'Title:Alien'], later: ['Anything:x'] },
      createdAt: '2030-01-01T00:00:00.000Z',
    });
  });

  it('refuses a non-admin user even with the scope, and names the user', async () => {
    const { use, store } = setup();
    const err = await refusal(
      use.create(principal({ admin: false, name: 'bob' }), { name: 'x', indexes: [], admin: false }),
    );
    expect(err).toEqual({ code: 'FORBIDDEN', detail: expect.stringContaining('"bob" is not an admin') });
    expect(store.users.size).toBe(0);
    for (const call of [
      use.find(principal({ admin: false }), undefined),
      use.setStatus(principal({ admin: false }), 'x', 'disabled'),
      use.delete(principal({ admin: false }), 'x'),
      use.update(principal({ admin: false }), { name: 'x' }),
    ])
      expect(await refusal(call)).toMatchObject({ code: 'FORBIDDEN' });
  });

  it.each([
    [{ movies: ['(Title:'] }, ['movies'], false, /realms\.movies\[0\]: .*/],
    [{ movies: ['Nope:x'] }, ['movies'], false, /realms\.movies\[0\]: .*Unknown field "Nope"/],
    [{ cars: ['Origin:USA'] }, ['movies'], false, /realms\.cars: names an index the user is not given/],
    [{ movies: ['Title:x'] }, ['*'], true, /no effect on an admin/],
  ])('refuses the realms %j (indexes %j, admin %s) and creates nothing', async (realms, indexes, admin, detail) => {
    const { use, store } = setup();
    const err = await refusal(use.create(root, { name: 'ada', indexes, realms, admin }));
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT', detail: expect.stringMatching(detail) });
    expect(store.users.size).toBe(0);
  });

  it('updates only what is given, and checks the kept realms against a narrower grant', async () => {
    const { use } = setup();
    await use.create(root, { name: 'ada', indexes: ['movies'], realms: { movies: ['Title:Alien'] }, admin: false });
    expect((await use.update(root, { name: 'ada', indexes: ['movies', 'cars'] })).realms).toEqual({
      movies: ['Title:Alien'],
    });
    expect(await refusal(use.update(root, { name: 'ada', indexes: ['cars'] }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringContaining('the user’s realms.movies'),
    });
    expect(await refusal(use.update(root, { name: 'ada', admin: true }))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const promoted = await use.update(root, { name: 'ada', admin: true, realms: {} });
    expect([promoted.admin, promoted.realms, promoted.indexes]).toEqual([true, {}, ['movies', 'cars']]);
    expect(await refusal(use.update(root, { name: 'ghost', admin: true }))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('never lets an admin lock themselves out: no disabling, demoting or deleting their own user', async () => {
    const { use, store } = setup();
    await store.createUser({ name: 'root', admin: true, indexes: ['*'], realms: [] });
    for (const call of [
      use.setStatus(root, 'root', 'disabled'),
      use.delete(root, 'root'),
      use.update(root, { name: 'root', admin: false }),
    ])
      expect(await refusal(call)).toMatchObject({
        code: 'INVALID_ARGUMENT',
        detail: expect.stringContaining('their own user'),
      });
    expect(store.users.get('root')).toMatchObject({ status: 'active', admin: true });
  });

  it('finds, disables, enables and deletes; a missing user is NOT_FOUND', async () => {
    const { use } = setup();
    await use.create(root, { name: 'ada', indexes: [], admin: false });
    await use.create(root, { name: 'bea', indexes: ['*'], admin: true });
    expect((await use.find(root, undefined)).users.map((u) => u.name)).toEqual(['ada', 'bea']);
    expect((await use.setStatus(root, 'ada', 'disabled')).status).toBe('disabled');
    expect((await use.find(root, 'ada')).users[0].status).toBe('disabled');
    expect((await use.setStatus(root, 'ada', 'active')).status).toBe('active');
    expect(await use.delete(root, 'ada')).toEqual({ name: 'ada', deleted: true });
    expect(await refusal(use.find(root, 'ada'))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await refusal(use.delete(root, 'ada'))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers a duplicate name with CONFLICT', async () => {
    const { use } = setup();
    await use.create(root, { name: 'ada', indexes: [], admin: false });
    expect(await refusal(use.create(root, { name: 'ada', indexes: [], admin: true }))).toMatchObject({
      code: 'CONFLICT',
    });
  });
});

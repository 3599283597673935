import os from 'node:os';
import { AppError } from '@quarry/errors';
import type { MetadataAndCatalog } from './open-metadata-store';
import type { AuditEntry } from './ports/audit-log.port';

/**
 * The behaviour every MetadataStore adapter must show (see the port's comments). Each adapter's
 * *.int.test.ts runs this once against a fresh, empty store.
 */
export function metadataStoreConformance(open: () => Promise<MetadataAndCatalog>): void {
  let store: MetadataAndCatalog;

  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.close();
  });

  const alice = {
    name: 'alice',
    admin: false,
    indexes: ['movies'],
    realms: [{ index: 'movies', query: 'Genre:Drama' }],
  };

  it('creates and finds users by name', async () => {
    const created = await store.createUser(alice);
    expect(created).toMatchObject({ ...alice, status: 'active' });
    expect(Date.parse(created.createdAt)).not.toBeNaN();
    expect(await store.findUserByName('alice')).toEqual(created);
    expect(await store.findUserByName('nobody')).toBeNull();
  });

  it('refuses a duplicate user name with CONFLICT and keeps the first', async () => {
    const first = await store.createUser(alice);
    await expect(store.createUser({ ...alice, admin: true })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await store.listUsers()).toEqual([first]);
  });

  it('keeps exactly one user when two creates race', async () => {
    const results = await Promise.allSettled([store.createUser(alice), store.createUser(alice)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await store.listUsers()).length).toBe(1);
  });

  it('returns copies', async () => {
    const created = await store.createUser(alice);
    created.indexes.push('secret');
    expect((await store.findUserByName('alice'))?.indexes).toEqual(['movies']);
  });

  it('updates the parts of a user given and keeps the rest', async () => {
    const created = await store.createUser(alice);
    const wider = await store.updateUser('alice', { indexes: ['movies', 'cars'] });
    expect(wider).toEqual({ ...created, indexes: ['movies', 'cars'] });
    const admin = await store.updateUser('alice', { admin: true, realms: [] });
    expect(admin).toEqual({ ...created, indexes: ['movies', 'cars'], admin: true, realms: [] });
    expect(await store.updateUser('alice', {})).toEqual(admin);
    expect(await store.findUserByName('alice')).toEqual(admin);
    await expect(store.updateUser('ghost', { admin: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // The owner a credential read returns is the updated one, on the very next read.
    const t = await store.createToken({
      userId: created.id,
      hash: '78'.repeat(32),
      prefix: 'qk_u',
      scopes: [],
      expiresAt: null,
    });
    await store.updateUser('alice', { realms: [{ index: 'cars', query: 'Origin:USA' }] });
    expect((await store.findCredentialById(t.id))?.owner?.realms).toEqual([{ index: 'cars', query: 'Origin:USA' }]);
  });

  it('keeps a token name when given, and none otherwise', async () => {
    const u = await store.createUser(alice);
    const named = await store.createToken({
      userId: u.id,
      hash: '9a'.repeat(32),
      prefix: 'qk_n',
      scopes: ['tokens:write'],
      expiresAt: null,
      name: 'wall dashboard',
    });
    const plain = await store.createToken({
      userId: u.id,
      hash: '9b'.repeat(32),
      prefix: 'qk_p',
      scopes: [],
      expiresAt: null,
    });
    expect(named.name).toBe('wall dashboard');
    expect('name' in plain).toBe(false);
    const listed = await store.listTokens();
    expect([listed.find((t) => t.id === named.id)?.name, listed.find((t) => t.id === plain.id)?.name]).toEqual([
      'wall dashboard',
      undefined,
    ]);
    expect((await store.findCredentialById(named.id))?.token.name).toBe('wall dashboard');
  });

  it('lists users by name and changes their status', async () => {
    await store.createUser({ ...alice, name: 'zed' });
    await store.createUser(alice);
    expect((await store.listUsers()).map((u) => u.name)).toEqual(['alice', 'zed']);
    expect((await store.setUserStatus('zed', 'disabled')).status).toBe('disabled');
    expect((await store.findUserByName('zed'))?.status).toBe('disabled');
    await expect(store.setUserStatus('ghost', 'disabled')).rejects.toBeInstanceOf(AppError);
  });

  it('deletes users and says NOT_FOUND for unknown ones', async () => {
    await store.createUser(alice);
    await store.deleteUser('alice');
    expect(await store.findUserByName('alice')).toBeNull();
    await expect(store.deleteUser('alice')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('stores tokens by hash, lists and revokes them once', async () => {
    const u = await store.createUser(alice);
    const t = await store.createToken({
      userId: u.id,
      hash: 'ab'.repeat(32),
      prefix: 'qk_abcdef',
      scopes: ['query:execute'],
      expiresAt: null,
    });
    expect(t).toMatchObject({
      userId: u.id,
      prefix: 'qk_abcdef',
      scopes: ['query:execute'],
      revokedAt: null,
      expiresAt: null,
    });
    expect(await store.findTokenByHash('ab'.repeat(32))).toEqual(t);
    expect(await store.findTokenByHash('cd'.repeat(32))).toBeNull();
    expect(await store.listTokens()).toEqual([t]);
    const revoked = await store.revokeToken(t.id);
    expect(revoked.revokedAt).not.toBeNull();
    await new Promise((r) => setTimeout(r, 5));
    expect((await store.revokeToken(t.id)).revokedAt).toBe(revoked.revokedAt);
    expect((await store.findTokenByHash('ab'.repeat(32)))?.revokedAt).toBe(revoked.revokedAt);
    await expect(store.revokeToken('missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('replaces a token’s scopes and keeps the rest, seen by the next read', async () => {
    const u = await store.createUser(alice);
    const t = await store.createToken({
      userId: u.id,
      hash: 'ef'.repeat(32),
      prefix: 'qk_s',
      scopes: ['indexes:read'],
      expiresAt: null,
    });
    const changed = await store.setTokenScopes(t.id, ['query:execute', 'reports:read']);
    expect(changed).toEqual({ ...t, scopes: ['query:execute', 'reports:read'] });
    expect((await store.findCredential('ef'.repeat(32)))?.token.scopes).toEqual(['query:execute', 'reports:read']);
    await expect(store.setTokenScopes('missing', [])).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('finds a credential: the token with its owner, in one read that sees later changes', async () => {
    const u = await store.createUser(alice);
    const t = await store.createToken({
      userId: u.id,
      hash: '12'.repeat(32),
      prefix: 'qk_c',
      scopes: ['indexes:read'],
      expiresAt: null,
    });
    expect(await store.findCredential('12'.repeat(32))).toEqual({ token: t, owner: u });
    expect(await store.findCredential('34'.repeat(32))).toBeNull();
    await store.setUserStatus('alice', 'disabled');
    expect((await store.findCredential('12'.repeat(32)))?.owner?.status).toBe('disabled');
    await store.revokeToken(t.id);
    expect((await store.findCredential('12'.repeat(32)))?.token.revokedAt).not.toBeNull();
    await store.deleteUser('alice');
    expect(await store.findCredential('12'.repeat(32))).toEqual({
      token: expect.objectContaining({ id: t.id }),
      owner: null,
    });
  });

  it('finds a credential by token id, with later revocations and owner removal', async () => {
    const u = await store.createUser(alice);
    const t = await store.createToken({
      userId: u.id,
      hash: '56'.repeat(32),
      prefix: 'qk_i',
      scopes: ['embed:create'],
      expiresAt: null,
    });
    expect(await store.findCredentialById(t.id)).toEqual({ token: t, owner: u });
    expect(await store.findCredentialById('no-such-id')).toBeNull();
    await store.revokeToken(t.id);
    expect((await store.findCredentialById(t.id))?.token.revokedAt).not.toBeNull();
    await store.deleteUser('alice');
    expect((await store.findCredentialById(t.id))?.owner).toBeNull();
  });

  describe('embed tokens', () => {
    const soon = () => new Date(Date.now() + 600_000).toISOString();
    const past = () => new Date(Date.now() - 1000).toISOString();
    const notFound = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      return { code: (err as AppError).code, detail: (err as AppError).detail };
    };

    it('records one, finds it by id, and refuses a duplicate id with CONFLICT', async () => {
      const rec = await store.recordEmbedToken({ id: 'e1', userId: 'u1', tokenId: 't1', expiresAt: soon() });
      expect(rec).toMatchObject({ id: 'e1', userId: 'u1', tokenId: 't1', revokedAt: null });
      expect(Date.parse(rec.createdAt)).not.toBeNaN();
      expect(await store.findEmbedToken('e1')).toEqual(rec);
      expect(await store.findEmbedToken('e2')).toBeNull();
      await expect(
        store.recordEmbedToken({ id: 'e1', userId: 'u2', tokenId: 't2', expiresAt: soon() }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await store.findEmbedToken('e1'))?.userId).toBe('u1');
    });

    it('revokes only its own user’s, once; another user’s id fails exactly as an unknown or expired one', async () => {
      await store.recordEmbedToken({ id: 'mine', userId: 'u1', tokenId: 't1', expiresAt: soon() });
      await store.recordEmbedToken({ id: 'sibling', userId: 'u1', tokenId: 't1', expiresAt: soon() });
      await store.recordEmbedToken({ id: 'gone', userId: 'u1', tokenId: 't1', expiresAt: past() });
      const unknown = await notFound(store.revokeEmbedToken('nope', 'u1'));
      expect(unknown.code).toBe('NOT_FOUND');
      expect(await notFound(store.revokeEmbedToken('mine', 'u2'))).toEqual(unknown);
      expect(await notFound(store.revokeEmbedToken('gone', 'u1'))).toEqual(unknown);
      expect((await store.findEmbedToken('mine'))?.revokedAt).toBeNull();
      const revoked = await store.revokeEmbedToken('mine', 'u1');
      expect(revoked.revokedAt).not.toBeNull();
      expect((await store.findEmbedToken('mine'))?.revokedAt).toBe(revoked.revokedAt);
      expect((await store.findEmbedToken('sibling'))?.revokedAt).toBeNull();
      await new Promise((r) => setTimeout(r, 5));
      expect((await store.revokeEmbedToken('mine', 'u1')).revokedAt).toBe(revoked.revokedAt);
      // Without a user (the operator's CLI): any user's.
      expect((await store.revokeEmbedToken('sibling')).revokedAt).not.toBeNull();
    });

    it('treats an expired one as gone, and purges exactly the expired ones', async () => {
      await store.recordEmbedToken({ id: 'old', userId: 'u1', tokenId: 't1', expiresAt: past() });
      await store.recordEmbedToken({ id: 'old-revoked', userId: 'u1', tokenId: 't1', expiresAt: soon() });
      await store.revokeEmbedToken('old-revoked');
      await store.recordEmbedToken({ id: 'live', userId: 'u1', tokenId: 't1', expiresAt: soon() });
      await store.recordEmbedToken({ id: 'other-user', userId: 'u2', tokenId: 't2', expiresAt: soon() });
      expect(await store.findEmbedToken('old')).toBeNull();
      // Live: neither expired nor revoked, and the user's own.
      expect(await store.countLiveEmbedTokens('u1', new Date().toISOString())).toBe(1);
      expect(await store.purgeEmbedTokens(new Date().toISOString())).toBe(1);
      // Ten minutes on, the revoked one and the live ones have expired too: all go, revoked or not.
      expect(await store.purgeEmbedTokens(new Date(Date.now() + 601_000).toISOString())).toBe(3);
      expect(await store.findEmbedToken('live')).toBeNull();
      expect(await store.purgeEmbedTokens(new Date(Date.now() + 601_000).toISOString())).toBe(0);
    });
  });

  const entry = (over: Partial<AuditEntry>): AuditEntry => ({
    time: '2026-01-02T03:04:05.000Z',
    userId: 'u1',
    userName: 'alice',
    tokenId: 't1',
    embedId: null,
    method: 'QUERIES.EXECUTE',
    index: 'movies',
    paramsDigest: 'ab'.repeat(32),
    outcome: 'ok',
    durationMs: 1.5,
    returned: 20,
    requestId: 'r1',
    ...over,
  });

  it('appends audit entries and lists them newest first, filtered by user, time and method', async () => {
    const a = entry({ requestId: 'a' });
    const b = entry({ requestId: 'b', time: '2026-01-03T00:00:00.000Z', method: 'INDEXES.FIND', index: null });
    const c = entry({
      requestId: 'c',
      time: '2026-01-03T00:00:00.000Z',
      userId: null,
      userName: null,
      tokenId: null,
      outcome: '401',
      returned: null,
      paramsDigest: null,
    });
    const d = entry({
      requestId: 'd',
      time: '2026-01-04T00:00:00.000Z',
      userName: 'bob',
      embedId: 'jti-1',
      durationMs: 0.25,
    });
    await store.appendAudit([a, b]);
    await store.appendAudit([c, d]);
    await store.appendAudit([]);
    const all = await store.listAudit({ limit: 100 });
    // Same time: the later appended first.
    expect(all.map((e) => e.requestId)).toEqual(['d', 'c', 'b', 'a']);
    expect(all[0]).toEqual(d);
    expect(all[1]).toEqual(c);
    expect((await store.listAudit({ userName: 'alice', limit: 100 })).map((e) => e.requestId)).toEqual(['b', 'a']);
    expect((await store.listAudit({ method: 'INDEXES.FIND', limit: 100 })).map((e) => e.requestId)).toEqual(['b']);
    expect((await store.listAudit({ since: '2026-01-03T00:00:00.000Z', limit: 100 })).map((e) => e.requestId)).toEqual([
      'd',
      'c',
      'b',
    ]);
    expect((await store.listAudit({ limit: 2 })).map((e) => e.requestId)).toEqual(['d', 'c']);
    const listed = await store.listAudit({ limit: 1 });
    listed[0].method = 'changed';
    expect((await store.listAudit({ limit: 1 }))[0].method).toBe('QUERIES.EXECUTE');
  });

  it('keeps what an admin call acted on, and nothing for the calls that name none', async () => {
    await store.appendAudit([
      entry({ requestId: 'admin', method: 'USERS.DISABLE', target: 'user bob', time: '2026-06-02T00:00:00.000Z' }),
      entry({ requestId: 'plain', time: '2026-06-01T00:00:00.000Z' }),
    ]);
    const [admin, plain] = await store.listAudit({ limit: 10 });
    expect(admin).toMatchObject({ requestId: 'admin', target: 'user bob' });
    expect(plain!.requestId).toBe('plain');
    expect(plain!.target ?? null).toBeNull();
  });

  it('purges audit entries older than a time', async () => {
    await store.appendAudit([
      entry({ requestId: 'old', time: '2025-01-01T00:00:00.000Z' }),
      entry({ requestId: 'new', time: '2026-06-01T00:00:00.000Z' }),
    ]);
    expect(await store.purgeAudit('2026-01-01T00:00:00.000Z')).toBe(1);
    expect((await store.listAudit({ limit: 10 })).map((e) => e.requestId)).toEqual(['new']);
    expect(await store.purgeAudit('2026-01-01T00:00:00.000Z')).toBe(0);
  });

  it('refuses a duplicate token hash', async () => {
    const u = await store.createUser(alice);
    const token = {
      userId: u.id,
      hash: 'ef'.repeat(32),
      prefix: 'qk_x',
      scopes: [],
      expiresAt: '2030-01-01T00:00:00.000Z',
    };
    await store.createToken(token);
    await expect(store.createToken(token)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await store.listTokens()).length).toBe(1);
  });

  it('answers ping while open', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  const movies = {
    name: 'movies',
    description: 'Films',
    fields: [{ name: 'Title', type: 'string' }],
    views: [{ name: 'Directors', field: 'Director' }],
    recordCount: 3201,
    snapshot: 'indexes/movies/a.parquet',
  };

  it('publishes index versions atomically with increasing versions', async () => {
    const first = await store.publishIndex(movies);
    expect(first.previous).toBeNull();
    expect(first.entry).toMatchObject({ ...movies, version: 1 });
    const second = await store.publishIndex({ ...movies, recordCount: 10, snapshot: 'indexes/movies/b.parquet' });
    expect(second.previous).toEqual(first.entry);
    expect(second.entry).toMatchObject({ version: 2, recordCount: 10 });
    expect(await store.getIndex('movies')).toEqual(second.entry);
  });

  it('keeps each version’s snapshot SHA-256, live and kept, and none where a publish gave none', async () => {
    const sha = 'a'.repeat(64);
    const first = await store.publishIndex({ ...movies, sha256: sha });
    expect(first.entry.sha256).toBe(sha);
    const second = await store.publishIndex({ ...movies, snapshot: 'indexes/movies/b.parquet' });
    expect(second.entry.sha256).toBeUndefined();
    expect((await store.getIndex('movies'))?.sha256).toBeUndefined();
    expect((await store.getIndexVersion('movies', 1))?.sha256).toBe(sha);
    expect((await store.getIndexVersion('movies', 2))?.sha256).toBeUndefined();
  });

  it('gives concurrent publishers distinct versions', async () => {
    const results = await Promise.all([1, 2, 3].map((n) => store.publishIndex({ ...movies, recordCount: n })));
    expect(results.map((r) => r.entry.version).sort()).toEqual([1, 2, 3]);
  });

  it('lists indexes by name and drops them', async () => {
    await store.publishIndex({ ...movies, name: 'zoo' });
    await store.publishIndex(movies);
    expect((await store.listIndexes()).map((i) => i.name)).toEqual(['movies', 'zoo']);
    expect((await store.dropIndex('zoo')).name).toBe('zoo');
    expect(await store.getIndex('zoo')).toBeNull();
    await expect(store.dropIndex('zoo')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('never repeats a version of a name, not even after a drop', async () => {
    await store.publishIndex(movies);
    const second = await store.publishIndex({ ...movies, snapshot: 'indexes/movies/b.parquet' });
    await store.dropIndex('movies');
    expect(await store.getIndex('movies')).toBeNull();
    expect((await store.listIndexes()).map((i) => i.name)).toEqual([]);
    const reloaded = await store.publishIndex({ ...movies, snapshot: 'indexes/movies/c.parquet' });
    expect(reloaded.entry.version).toBeGreaterThan(second.entry.version);
    // The dropped version is not offered as the previous one: its files are gone.
    expect(reloaded.previous).toBeNull();
    expect(await store.getIndex('movies')).toEqual(reloaded.entry);
    await expect(store.dropIndex('movies')).resolves.toMatchObject({ version: reloaded.entry.version });
    await expect(store.dropIndex('movies')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  const holder = (id: string, pid = process.pid) => ({ id, host: os.hostname(), pid });
  // A saved report runs on the version it was saved on while its snapshot is kept.
  it('keeps every published version readable until released, and none after a drop', async () => {
    const v1 = (await store.publishIndex(movies)).entry;
    const v2 = (await store.publishIndex({ ...movies, recordCount: 7, snapshot: 'indexes/movies/b.parquet' })).entry;
    const v3 = (await store.publishIndex({ ...movies, recordCount: 9, snapshot: 'indexes/movies/c.parquet' })).entry;
    expect(await store.getIndexVersion('movies', v1.version)).toEqual(v1);
    expect(await store.getIndexVersion('movies', v2.version)).toEqual(v2);
    expect(await store.getIndexVersion('movies', v3.version)).toEqual(v3);
    expect(await store.getIndexVersion('movies', 99)).toBeNull();
    expect(await store.getIndexVersion('zoo', 1)).toBeNull();
    expect((await store.listIndexVersions('movies')).map((e) => e.version)).toEqual([1, 2, 3]);
    await store.releaseIndexVersions('movies', [v1.version]);
    expect(await store.getIndexVersion('movies', v1.version)).toBeNull();
    expect((await store.listIndexVersions('movies')).map((e) => e.version)).toEqual([2, 3]);
    await store.dropIndex('movies');
    expect(await store.getIndexVersion('movies', v2.version)).toBeNull();
    expect(await store.listIndexVersions('movies')).toEqual([]);
    const v4 = (await store.publishIndex(movies)).entry;
    expect((await store.listIndexVersions('movies')).map((e) => e.version)).toEqual([v4.version]);
  });

  it("keeps an index's owner on its live entry, lists a user's own indexes, and forgets them on a drop", async () => {
    const owned = (await store.publishIndex({ ...movies, owner: 'u-alice' })).entry;
    expect(owned.owner).toBe('u-alice');
    expect((await store.getIndex('movies'))?.owner).toBe('u-alice');
    await store.publishIndex({ ...movies, name: 'zoo', owner: 'u-alice' });
    await store.publishIndex({ ...movies, name: 'bank', owner: 'u-bob' });
    await store.publishIndex({ ...movies, name: 'cli' });
    expect(await store.ownedIndexes('u-alice')).toEqual(['movies', 'zoo']);
    expect(await store.ownedIndexes('u-bob')).toEqual(['bank']);
    expect(await store.ownedIndexes('u-nobody')).toEqual([]);
    expect((await store.getIndex('cli'))?.owner).toBeUndefined();
    // Versions describe data, not rights: the owner is the live entry's alone.
    expect((await store.getIndexVersion('movies', owned.version))?.owner).toBeUndefined();
    // A publish without an owner (the CLI's load over it) clears it.
    await store.publishIndex({ ...movies, name: 'zoo' });
    expect((await store.getIndex('zoo'))?.owner).toBeUndefined();
    await store.dropIndex('movies');
    expect(await store.ownedIndexes('u-alice')).toEqual([]);
  });

  it('keeps the source run that published a version with it, live and kept; a publish without one clears it', async () => {
    const origin = { sourceId: 's1', runId: 'r1', cursor: { value: '2024-01-02 00:00:00', of: '["at"]' } };
    const v1 = (await store.publishIndex({ ...movies, origin })).entry;
    expect(v1.origin).toEqual(origin);
    expect((await store.getIndex('movies'))?.origin).toEqual(origin);
    expect((await store.getIndexVersion('movies', v1.version))?.origin).toEqual(origin);
    const v2 = (await store.publishIndex({ ...movies })).entry;
    expect(v2.origin).toBeUndefined();
    expect((await store.getIndex('movies'))?.origin).toBeUndefined();
    expect((await store.listIndexVersions('movies')).map((e) => e.origin ?? null)).toEqual(
      expect.arrayContaining([origin, null]),
    );
  });

  it('grants one load lock per name and refuses a second holder, naming the first', async () => {
    const lock = await store.acquireLoadLock('movies', holder('a'), 60_000);
    await expect(store.acquireLoadLock('movies', holder('b'), 60_000)).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: expect.stringMatching(/being loaded.*pid \d+/),
    });
    // Another name is independent.
    const other = await store.acquireLoadLock('zoo', holder('b'), 60_000);
    await lock.renew();
    await lock.release();
    const next = await store.acquireLoadLock('movies', holder('c'), 60_000);
    await next.release();
    await other.release();
  });

  it('lets exactly one of two racing acquirers win', async () => {
    const results = await Promise.allSettled([
      store.acquireLoadLock('race', holder('a'), 60_000),
      store.acquireLoadLock('race', holder('b'), 60_000),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(
      ['CONFLICT'],
    );
  });

  it('takes over a lock whose lease ran out; the old holder then cannot renew or release it', async () => {
    const stale = await store.acquireLoadLock('movies', holder('old'), 30);
    await new Promise((r) => setTimeout(r, 60));
    const fresh = await store.acquireLoadLock('movies', holder('new'), 60_000);
    await expect(stale.renew()).rejects.toMatchObject({ code: 'CONFLICT' });
    await stale.release();
    await expect(store.acquireLoadLock('movies', holder('third'), 60_000)).rejects.toMatchObject({ code: 'CONFLICT' });
    await fresh.release();
  });
}

import { AppError } from '@quarry/errors';
import type { EmbedTokenRecord } from '@quarry/metadata-store';
import { silentLogger } from '@quarry/logger';
import { EmbedTokenRegistry } from './embed-token-registry';

/** One metadata store shared by several gateways (replicas), counting its lookups. */
function sharedStore() {
  const rows = new Map<string, EmbedTokenRecord>();
  const store = {
    lookups: 0,
    /** Set to hold lookups until released (a slow store). */
    gate: undefined as Promise<void> | undefined,
    async recordEmbedToken(t: { id: string; userId: string; tokenId: string; expiresAt: string }) {
      const rec = { ...t, createdAt: new Date().toISOString(), revokedAt: null };
      rows.set(t.id, rec);
      return { ...rec };
    },
    async findEmbedToken(id: string) {
      store.lookups += 1;
      const row = rows.get(id);
      const copy = row && { ...row };
      await store.gate;
      return copy ?? null;
    },
    async revokeEmbedToken(id: string, userId?: string) {
      const row = rows.get(id);
      if (!row || (userId !== undefined && row.userId !== userId)) throw AppError.notFound('Embed token not found');
      row.revokedAt ??= new Date().toISOString();
      return { ...row };
    },
    async countLiveEmbedTokens(userId: string, now: string) {
      return [...rows.values()].filter((r) => r.userId === userId && r.expiresAt > now && r.revokedAt === null).length;
    },
    async purgeEmbedTokens(now: string) {
      let n = 0;
      for (const [id, r] of rows) if (r.expiresAt <= now) n += Number(rows.delete(id));
      return n;
    },
  };
  return store;
}

const log = silentLogger();
const soon = () => new Date(Date.now() + 600_000).toISOString();

describe('EmbedTokenRegistry', () => {
  it('counts its own revocation at once, another replica’s once its cache entry has lived (cacheMs)', async () => {
    const store = sharedStore();
    // Long enough that a loaded machine cannot let the entry expire between the two cached answers below.
    const cacheMs = 1000;
    const here = new EmbedTokenRegistry(store, log, { cacheMs });
    const replica = new EmbedTokenRegistry(store, log, { cacheMs });
    await here.record({ id: 'e1', userId: 'u1', tokenId: 't1', expiresAt: soon() });
    expect(await replica.isRevoked('e1')).toBe(false);
    await here.revoke('e1', 'u1');
    expect(await here.isRevoked('e1')).toBe(true);
    expect(here.revokedByThisGateway('e1')).toBe(true);
    // The replica answers from its cache (no lookup) until the entry expires, then asks the store.
    const before = store.lookups;
    expect(await replica.isRevoked('e1')).toBe(false);
    expect(store.lookups).toBe(before);
    expect(replica.revokedByThisGateway('e1')).toBe(false);
    await new Promise((r) => setTimeout(r, cacheMs + 20));
    expect(await replica.isRevoked('e1')).toBe(true);
  });

  it('asks the store once for many concurrent calls with one token, then not again while cached', async () => {
    const store = sharedStore();
    const registry = new EmbedTokenRegistry(store, log, { cacheMs: 60_000 });
    await registry.record({ id: 'busy', userId: 'u1', tokenId: 't1', expiresAt: soon() });
    const answers = await Promise.all(Array.from({ length: 20 }, () => registry.isRevoked('busy')));
    expect(answers.every((a) => a === false)).toBe(true);
    expect(store.lookups).toBe(1);
    for (let i = 0; i < 100; i++) await registry.isRevoked('busy');
    expect(store.lookups).toBe(1);
  });

  it('does not let through a call whose lookup set out before this gateway revoked the token', async () => {
    const store = sharedStore();
    const registry = new EmbedTokenRegistry(store, log);
    await registry.record({ id: 'racing', userId: 'u1', tokenId: 't1', expiresAt: soon() });
    let release!: () => void;
    store.gate = new Promise((r) => (release = r));
    const pending = registry.isRevoked('racing');
    await new Promise((r) => setImmediate(r));
    store.gate = undefined;
    await registry.revoke('racing', 'u1');
    release();
    expect(await pending).toBe(true);
  });

  it('refuses another user’s id as an unknown one, and forgets what has expired when it purges', async () => {
    const store = sharedStore();
    const registry = new EmbedTokenRegistry(store, log);
    await registry.record({ id: 'theirs', userId: 'u2', tokenId: 't2', expiresAt: soon() });
    await expect(registry.revoke('theirs', 'u1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(registry.revoke('nobody', 'u1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await registry.isRevoked('theirs')).toBe(false);

    let now = Date.now();
    const clocked = new EmbedTokenRegistry(store, log, {}, () => now);
    await clocked.record({ id: 'short', userId: 'u1', tokenId: 't1', expiresAt: new Date(now + 1000).toISOString() });
    await clocked.revoke('short');
    now += 2000;
    await clocked.purge();
    expect(clocked.revokedByThisGateway('short')).toBe(false);
    expect(await store.findEmbedToken('short')).toBeNull();
  });
});

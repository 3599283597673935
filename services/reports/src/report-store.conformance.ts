import type { NewReport, ReportStore } from './ports/report-store.port';

/** The behaviour every ReportStore adapter must show (see the port); run once per adapter. */
export function reportStoreConformance(open: () => Promise<ReportStore>): void {
  let store: ReportStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.close();
  });

  const report = (over: Partial<NewReport> = {}): NewReport => ({
    ownerId: 'u1',
    ownerName: 'ann',
    name: 'Top grossing dramas',
    description: 'Dramas by worldwide gross',
    folder: 'films',
    shared: false,
    type: 'query',
    index: 'movies',
    method: 'QUERIES.EXECUTE',
    params: '{"index":"movies"}',
    ...over,
  });

  it('inserts and gets reports by guid', async () => {
    const saved = await store.insert(report());
    expect(saved.guid).toMatch(/^[0-9a-f-]{36}$/);
    expect(saved).toMatchObject({ ...report(), guid: saved.guid });
    expect(await store.get(saved.guid)).toEqual(saved);
    expect(await store.get('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('refuses a second report of the same name for the same owner, in any case', async () => {
    await store.insert(report());
    await expect(store.insert(report({ name: 'TOP GROSSING DRAMAS' }))).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(store.insert(report({ ownerId: 'u2', ownerName: 'bob' }))).resolves.toBeDefined();
  });

  it('lets exactly one of two racing inserts of one name win', async () => {
    const results = await Promise.allSettled([store.insert(report({ name: 'race' })), store.insert(report({ name: 'race' }))]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });

  it('finds newest first by visibility, words, types and sequence', async () => {
    const a = await store.insert(report({ name: 'Alpha drama', description: 'first' }));
    const b = await store.insert(report({ name: 'Beta', description: 'crosstab of comedies', type: 'crosstab', method: 'CROSSTAB.EXECUTE' }));
    const c = await store.insert(report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob shared', description: 'notes', shared: true }));
    await store.insert(report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob private' }));
    const find = (q: Partial<Parameters<ReportStore['find']>[0]>) => store.find({ viewerId: 'u1', words: [], types: [], beforeSeq: undefined, limit: 50, ...q }).then((rs) => rs.map((r) => r.name));
    expect(await find({})).toEqual([c.name, b.name, a.name]);
    expect(await find({ viewerId: undefined })).toEqual(['Bob private', c.name, b.name, a.name]);
    expect(await find({ words: ['drama'] })).toEqual([a.name]);
    expect(await find({ words: ['comed'] })).toEqual([b.name]);
    expect(await find({ words: ['crosstab', 'comedies'] })).toEqual([b.name]);
    expect(await find({ words: ['rama'] })).toEqual([]);
    expect(await find({ types: ['crosstab'] })).toEqual([b.name]);
    expect(await find({ beforeSeq: b.seq })).toEqual([a.name]);
    expect(await find({ limit: 1 })).toEqual([c.name]);
    expect(await find({ viewerId: undefined, ownerName: 'bob' })).toEqual(['Bob private', c.name]);
  });

  it('treats LIKE and regex characters in search words literally', async () => {
    await store.insert(report({ name: 'a_b 100%' }));
    expect((await store.find({ viewerId: 'u1', words: ['%'], types: [], beforeSeq: undefined, limit: 5 })).length).toBe(0);
  });

  it('deletes by guid', async () => {
    const saved = await store.insert(report());
    await store.delete(saved.guid);
    expect(await store.get(saved.guid)).toBeNull();
    await expect(store.delete(saved.guid)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
}

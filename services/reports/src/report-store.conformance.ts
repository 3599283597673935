import type { NewReport, ReportQuery, ReportStore } from './ports/report-store.port';

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
    const results = await Promise.allSettled([
      store.insert(report({ name: 'race' })),
      store.insert(report({ name: 'race' })),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });

  it('finds newest first by visibility, words, types and sequence', async () => {
    const a = await store.insert(report({ name: 'Alpha drama', description: 'first' }));
    const b = await store.insert(
      report({ name: 'Beta', description: 'crosstab of comedies', type: 'crosstab', method: 'CROSSTAB.EXECUTE' }),
    );
    const c = await store.insert(
      report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob shared', description: 'notes', shared: true }),
    );
    await store.insert(report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob private' }));
    const find = (q: Partial<Parameters<ReportStore['find']>[0]>) =>
      store
        .find({ viewerId: 'u1', readableIndexes: ['*'], words: [], types: [], beforeSeq: undefined, limit: 50, ...q })
        .then((rs) => rs.map((r) => r.name));
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

  describe('visibility of shared reports follows the readable indexes', () => {
    const ann = (readableIndexes?: string[]): Pick<ReportQuery, 'viewerId' | 'readableIndexes'> => ({
      viewerId: 'u1',
      readableIndexes,
    });
    const names = (q: Pick<ReportQuery, 'viewerId' | 'readableIndexes'>) =>
      store.find({ ...q, words: [], types: [], beforeSeq: undefined, limit: 50 }).then((rs) => rs.map((r) => r.name));

    it('hides a shared report on an unreadable index from find and getVisible, and keeps own reports visible', async () => {
      const bobFlights = await store.insert(
        report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob flights', index: 'flights', shared: true }),
      );
      const bobMovies = await store.insert(
        report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob movies', index: 'movies', shared: true }),
      );
      const annFlights = await store.insert(report({ name: 'Ann flights', index: 'flights' }));
      const bobPrivate = await store.insert(
        report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob private', index: 'movies' }),
      );

      expect(await names(ann(['movies']))).toEqual(['Ann flights', 'Bob movies']);
      expect(await store.getVisible(bobFlights.guid, { viewerId: 'u1', readableIndexes: ['movies'] })).toBeNull();
      expect(await store.getVisible(bobMovies.guid, { viewerId: 'u1', readableIndexes: ['movies'] })).toEqual(
        bobMovies,
      );
      // The owner's own report on an index it may no longer read is still its own.
      expect(await store.getVisible(annFlights.guid, { viewerId: 'u1', readableIndexes: ['movies'] })).toEqual(
        annFlights,
      );
      expect(await store.getVisible(annFlights.guid, { viewerId: 'u1', readableIndexes: [] })).toEqual(annFlights);

      expect(await names(ann(['*']))).toEqual(['Ann flights', 'Bob movies', 'Bob flights']);
      expect(await names(ann(['movies', 'flights']))).toEqual(['Ann flights', 'Bob movies', 'Bob flights']);
      expect(await store.getVisible(bobFlights.guid, { viewerId: 'u1', readableIndexes: ['*'] })).toEqual(bobFlights);
      // "*" opens shared reports only: another user's private report stays hidden.
      expect(await store.getVisible(bobPrivate.guid, { viewerId: 'u1', readableIndexes: ['*'] })).toBeNull();
      expect(await store.getVisible(bobPrivate.guid, { viewerId: 'u2', readableIndexes: [] })).toEqual(bobPrivate);

      // No readable index, or none given at all: own reports only (fail closed).
      expect(await names(ann([]))).toEqual(['Ann flights']);
      expect(await names(ann(undefined))).toEqual(['Ann flights']);
      expect(
        await store.getVisible('00000000-0000-4000-8000-000000000000', { viewerId: 'u1', readableIndexes: ['*'] }),
      ).toBeNull();
    });

    it('matches index names exactly: no case folding, prefixes, wildcards or injected query text', async () => {
      await store.insert(
        report({ ownerId: 'u2', ownerName: 'bob', name: 'Bob flights', index: 'flights', shared: true }),
      );
      for (const hostile of [
        ['Flights'],
        ['flight'],
        ['flights '],
        ['fl%'],
        ['fl_ghts'],
        ['.*'],
        ["' OR 1=1 --"],
        ['{"$ne":null}'],
      ]) {
        expect({ hostile, names: await names(ann(hostile)) }).toEqual({ hostile, names: [] });
      }
    });

    it('pages across many hidden reports with full pages, no duplicates and none skipped', async () => {
      const visible: string[] = [];
      // Long runs of hidden reports between visible ones: a filter applied after fetching would return
      // short or empty pages here, or end the walk early.
      for (let i = 0; i < 90; i++) {
        const shown = i % 9 === 0 || i % 9 === 4;
        const kind = i % 3;
        const r = shown
          ? report(
              kind === 0
                ? { name: `r${i}`, index: 'flights' }
                : { ownerId: 'u2', ownerName: 'bob', name: `r${i}`, index: 'movies', shared: true },
            )
          : report({
              ownerId: 'u2',
              ownerName: 'bob',
              name: `r${i}`,
              index: kind === 0 ? 'movies' : 'flights',
              shared: kind !== 0,
            });
        await store.insert(r);
        if (shown) visible.unshift(r.name);
      }
      expect(visible).toHaveLength(20);
      const limit = 3;
      const pages: string[][] = [];
      let beforeSeq: number | undefined;
      for (;;) {
        // The domain's look-ahead: ask for one more than a page to know whether another follows.
        const found = await store.find({ ...ann(['movies']), words: [], types: [], beforeSeq, limit: limit + 1 });
        const page = found.slice(0, limit);
        pages.push(page.map((r) => r.name));
        if (found.length <= limit) break;
        beforeSeq = page[page.length - 1].seq;
      }
      expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
      expect(pages.flat()).toEqual(visible);
      expect(pages).toHaveLength(Math.ceil(visible.length / limit));
    });
  });

  // Every adapter finds by word prefixes (MongoDB now through an index of the words);
  // the negative cases are what an index of whole words or a substring match would get wrong.
  it('finds a report by the starts of its words, every query word in the name or the description', async () => {
    await store.insert(report({ name: 'Portfolio review', description: 'Quarterly café report' }));
    await store.insert(report({ name: 'Airports by state', description: 'Counts per state' }));
    await store.insert(report({ name: 'Import log', description: 'rows imported last night' }));
    const find = (...words: string[]) =>
      store
        .find({ viewerId: 'u1', readableIndexes: ['*'], words, types: [], beforeSeq: undefined, limit: 50 })
        .then((rs) => rs.map((r) => r.name).sort());
    expect(await find('port')).toEqual(['Portfolio review']);
    expect(await find('portfolio')).toEqual(['Portfolio review']);
    expect(await find('report')).toEqual(['Portfolio review']);
    expect(await find('airport')).toEqual(['Airports by state']);
    expect(await find('imp')).toEqual(['Import log']);
    expect(await find('caf')).toEqual(['Portfolio review']);
    expect(await find('café')).toEqual(['Portfolio review']);
    expect(await find('review', 'quarter')).toEqual(['Portfolio review']);
    expect(await find('state', 'per')).toEqual(['Airports by state']);
    // Inside a word, across two words, beyond a word, one word of two missing: nothing.
    expect(await find('orts')).toEqual([]);
    expect(await find('ported')).toEqual([]);
    expect(await find('reviewquarterly')).toEqual([]);
    expect(await find('portfolios')).toEqual([]);
    expect(await find('review', 'airport')).toEqual([]);
  });

  it('treats LIKE and regex characters in search words literally', async () => {
    await store.insert(report({ name: 'a_b 100%' }));
    expect((await store.find({ viewerId: 'u1', words: ['%'], types: [], beforeSeq: undefined, limit: 5 })).length).toBe(
      0,
    );
  });

  it('deletes by guid', async () => {
    const saved = await store.insert(report());
    await store.delete(saved.guid);
    expect(await store.get(saved.guid)).toBeNull();
    await expect(store.delete(saved.guid)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  // Versions, the trash, and the index versions reports were saved on.
  describe('versions and the trash', () => {
    const params = (n: number) => JSON.stringify({ index: 'movies', query: `q${n}` });

    it('starts at version 1 and appends one version per new params, none for a rename or a share', async () => {
      const saved = await store.insert(report({ params: params(1), indexVersion: 4 }));
      expect(saved).toMatchObject({ version: 1, indexVersion: 4 });
      const renamed = await store.update(saved.guid, { name: 'Renamed', shared: true, folder: 'x', description: 'd' });
      expect(renamed).toMatchObject({ version: 1, name: 'Renamed', shared: true, folder: 'x', description: 'd' });
      const next = await store.update(saved.guid, { params: { params: params(2), indexVersion: 5 } });
      expect(next).toMatchObject({ version: 2, params: params(2), indexVersion: 5, name: 'Renamed' });
      expect(await store.get(saved.guid)).toMatchObject({ version: 2, params: params(2), indexVersion: 5 });
      const versions = await store.versions(saved.guid);
      expect(versions.map((v) => [v.version, v.params, v.indexVersion])).toEqual([
        [1, params(1), 4],
        [2, params(2), 5],
      ]);
      expect(versions.every((v) => !Number.isNaN(Date.parse(v.savedAt)))).toBe(true);
      // The new name is found, the old one is not, and it is free again for another report.
      const found = await store.find({ viewerId: 'u1', words: ['renamed'], types: [], beforeSeq: undefined, limit: 5 });
      expect(found.map((r) => r.guid)).toEqual([saved.guid]);
      await expect(store.insert(report())).resolves.toBeDefined();
    });

    it('refuses a rename onto another report of the owner (CONFLICT) and an update of an unknown guid (NOT_FOUND)', async () => {
      const a = await store.insert(report({ name: 'A' }));
      await store.insert(report({ name: 'B' }));
      await expect(store.update(a.guid, { name: 'b' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await store.get(a.guid))?.name).toBe('A');
      await expect(store.update('00000000-0000-4000-8000-000000000000', { name: 'C' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
    });

    it('loses no version when updates race: each one appends its own, numbered without gaps', async () => {
      const saved = await store.insert(report({ params: params(0) }));
      const racers = Array.from({ length: 12 }, (_, i) => i + 1);
      const results = await Promise.all(
        racers.map((n) => store.update(saved.guid, { params: { params: params(n), indexVersion: n } })),
      );
      expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(racers.map((n) => n + 1));
      const versions = await store.versions(saved.guid);
      expect(versions.map((v) => v.version)).toEqual([1, ...racers.map((n) => n + 1)]);
      // Every racer's params are there exactly once, each with its own index version.
      expect(versions.map((v) => v.params).sort()).toEqual([0, ...racers].map(params).sort());
      expect(versions.every((v) => v.params === params(v.indexVersion))).toBe(true);
      expect((await store.get(saved.guid))?.version).toBe(racers.length + 1);
    });

    it('hides a trashed report everywhere, frees its name, and restores it as it was', async () => {
      const saved = await store.insert(report({ shared: true }));
      await store.update(saved.guid, { params: { params: params(2), indexVersion: 2 } });
      const deletedAt = new Date().toISOString();
      await store.trash(saved.guid, deletedAt);
      expect(await store.get(saved.guid)).toBeNull();
      expect(await store.getVisible(saved.guid, { viewerId: 'u1', readableIndexes: ['*'] })).toBeNull();
      expect(await store.versions(saved.guid)).toEqual([]);
      const all = await store.find({ viewerId: undefined, words: [], types: [], beforeSeq: undefined, limit: 50 });
      expect(all.map((r) => r.guid)).not.toContain(saved.guid);
      await expect(store.update(saved.guid, { name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(store.trash(saved.guid, deletedAt)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await store.getTrashed(saved.guid)).toMatchObject({ deletedAt, report: { guid: saved.guid, version: 2 } });

      const restored = await store.restore(saved.guid);
      expect(restored).toMatchObject({ guid: saved.guid, name: saved.name, version: 2, shared: true });
      expect((await store.versions(saved.guid)).map((v) => v.version)).toEqual([1, 2]);
      expect(await store.getTrashed(saved.guid)).toBeNull();
      await expect(store.restore(saved.guid)).rejects.toMatchObject({ code: 'NOT_FOUND' });

      // Its name taken meanwhile: the restore is refused and it stays in the trash.
      await store.trash(saved.guid, deletedAt);
      await store.insert(report());
      await expect(store.restore(saved.guid)).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.getTrashed(saved.guid)).not.toBeNull();
    });

    it('lists the trash, most recently deleted first, for every owner or one', async () => {
      const a = await store.insert(report({ name: 'a' }));
      const b = await store.insert(report({ name: 'b', ownerId: 'u2', ownerName: 'bob' }));
      await store.insert(report({ name: 'live' }));
      await store.trash(a.guid, '2026-01-01T00:00:00.000Z');
      await store.trash(b.guid, '2026-02-01T00:00:00.000Z');
      expect((await store.listTrash()).map((t) => [t.report.name, t.deletedAt])).toEqual([
        ['b', '2026-02-01T00:00:00.000Z'],
        ['a', '2026-01-01T00:00:00.000Z'],
      ]);
      expect((await store.listTrash('ann')).map((t) => t.report.guid)).toEqual([a.guid]);
      expect(await store.listTrash('nobody')).toEqual([]);
    });

    it('purges only what went into the trash before the limit', async () => {
      const old = await store.insert(report({ name: 'old' }));
      const young = await store.insert(report({ name: 'young' }));
      const live = await store.insert(report({ name: 'live' }));
      await store.trash(old.guid, '2026-01-01T00:00:00.000Z');
      await store.trash(young.guid, '2026-03-01T00:00:00.000Z');
      expect(await store.purgeTrash('2026-02-01T00:00:00.000Z')).toBe(1);
      expect(await store.getTrashed(old.guid)).toBeNull();
      await expect(store.restore(old.guid)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await store.getTrashed(young.guid)).not.toBeNull();
      expect(await store.get(live.guid)).not.toBeNull();
    });

    it('lists the index versions any version of any report on an index was saved on, trashed ones too', async () => {
      const a = await store.insert(report({ name: 'a', indexVersion: 3 }));
      await store.update(a.guid, { params: { params: params(1), indexVersion: 7 } });
      const b = await store.insert(report({ name: 'b', indexVersion: 5 }));
      await store.trash(b.guid, new Date().toISOString());
      await store.insert(report({ name: 'c', indexVersion: 0 }));
      await store.insert(report({ name: 'd', index: 'flights', indexVersion: 9 }));
      expect(await store.referencedIndexVersions('movies')).toEqual([3, 5, 7]);
      expect(await store.referencedIndexVersions('flights')).toEqual([9]);
      expect(await store.referencedIndexVersions('zoo')).toEqual([]);
    });
  });
}

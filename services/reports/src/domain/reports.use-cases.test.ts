import { randomBytes } from 'node:crypto';
import { CursorCodec } from '@quarry/paging';
import { SqliteReportStore } from '../adapters/sqlite-report-store.adapter';
import type { NewReport } from '../ports/report-store.port';
import { FindReportsUseCase, ReportMetadataUseCase, SaveReportUseCase, type Viewer } from './reports.use-cases';

const ann: Viewer = { userId: 'u-ann', userName: 'ann', admin: false, indexes: ['movies', 'flights'] };
const bea: Viewer = { userId: 'u-bea', userName: 'bea', admin: false, indexes: ['movies'] };
const cy: Viewer = { userId: 'u-cy', userName: 'cy', admin: false, indexes: ['*'] };
const root: Viewer = { userId: 'u-root', userName: 'root', admin: true, indexes: [] };

describe('reports use cases: a shared report shows only to readers of its index', () => {
  let store: SqliteReportStore;
  let find: FindReportsUseCase;
  let metadata: ReportMetadataUseCase;
  let save: SaveReportUseCase;

  beforeEach(() => {
    store = new SqliteReportStore(':memory:');
    find = new FindReportsUseCase(store, new CursorCodec(randomBytes(32)));
    metadata = new ReportMetadataUseCase(store);
    save = new SaveReportUseCase(store);
  });
  afterEach(() => store.close());

  const saveAs = (viewer: Viewer, name: string, index: string, shared: boolean) =>
    save.save(viewer, {
      name,
      description: '',
      folder: '',
      shared,
      type: 'crosstab',
      index,
      method: 'CROSSTAB.EXECUTE',
      paramsJson: JSON.stringify({ index, query: 'secret words' }),
      indexVersion: 1,
    });
  const namesFor = async (viewer: Viewer) =>
    (await find.find(viewer, { search: '', types: [], cursor: '' })).reports.map((r) => r.name);
  const detailOf = (p: Promise<unknown>) =>
    p.then(
      () => 'resolved',
      (err: { code: string; detail: string }) => `${err.code}: ${err.detail}`,
    );

  it('lists and opens a shared flights report for readers of flights, "*" and admins only', async () => {
    const { guid } = await saveAs(ann, 'Delays by carrier', 'flights', true);
    await saveAs(ann, 'Genres', 'movies', true);

    expect(await namesFor(bea)).toEqual(['Genres']);
    expect(await namesFor(cy)).toEqual(['Genres', 'Delays by carrier']);
    expect(await namesFor(root)).toEqual(['Genres', 'Delays by carrier']);
    expect(await namesFor(ann)).toEqual(['Genres', 'Delays by carrier']);

    const random = '6f1c2a9e-0b7d-4c1e-9a3f-2d5e8b7c4a10';
    // Exactly the answer of a guid that never existed, up to the guid itself.
    expect(await detailOf(metadata.load(bea, guid))).toBe(`NOT_FOUND: Report ${guid} not found`);
    expect(await detailOf(metadata.load(bea, random))).toBe(`NOT_FOUND: Report ${random} not found`);
    expect((await metadata.load(cy, guid)).report.index).toBe('flights');
    expect((await metadata.load(root, guid)).report.owner).toBe('ann');
  });

  it("keeps an owner's report visible to its owner after the owner lost the index", async () => {
    const { guid } = await saveAs(ann, 'Old flights', 'flights', false);
    const annNow: Viewer = { ...ann, indexes: ['movies'] };
    expect(await namesFor(annNow)).toEqual(['Old flights']);
    expect((await metadata.load(annNow, guid)).report.name).toBe('Old flights');
  });

  it('gives a caller with no readable index only its own reports', async () => {
    await saveAs(ann, 'Shared flights', 'flights', true);
    const nobody: Viewer = { userId: 'u-none', userName: 'none', admin: false, indexes: [] };
    expect(await namesFor(nobody)).toEqual([]);
  });

  it('pages through visible reports past hundreds of hidden ones: full pages, each once', async () => {
    const rows: NewReport[] = [];
    for (let i = 0; i < 300; i++) {
      const hidden = i % 10 !== 0;
      rows.push({
        ownerId: ann.userId,
        ownerName: 'ann',
        name: `r${i}`,
        description: '',
        folder: '',
        shared: true,
        type: 'query',
        index: hidden ? 'flights' : 'movies',
        method: 'QUERIES.EXECUTE',
        params: '{}',
      });
    }
    for (const r of rows) await store.insert(r);
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor = '';
    do {
      const page = await find.find(bea, { search: '', types: [], cursor, limit: 7 });
      sizes.push(page.reports.length);
      seen.push(...page.reports.map((r) => r.name));
      cursor = page.nextCursor ?? '';
    } while (cursor);
    expect(seen).toEqual(
      rows
        .filter((r) => r.index === 'movies')
        .map((r) => r.name)
        .reverse(),
    );
    expect(sizes).toEqual([7, 7, 7, 7, 2]);
  });

  it('quotes hostile type names cut short, naming at most ten', async () => {
    const bad = Array.from({ length: 40 }, (_, i) => `${i}${'x'.repeat(100_000)}`);
    const detail = await detailOf(find.find(bea, { search: '', types: bad, cursor: '' }));
    expect(detail).toMatch(
      /^INVALID_ARGUMENT: types may hold only query and crosstab, got "0x{99}…" \(100001 characters\), /,
    );
    expect(detail).toMatch(/ and 30 more$/);
    expect(detail.length).toBeLessThan(1500);
  });
});

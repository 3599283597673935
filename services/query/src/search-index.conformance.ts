import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { buildSnapshot, SnapshotEngine } from '@quarry/snapshots';
import type { SearchIndex, SortKey } from './ports/search-index.port';

const RECORDS = [
  { name: 'Ada Lovelace', city: 'London', score: 90, price: 9.5, added: '2020-01-05', active: true },
  { name: 'Alan Turing', city: 'Manchester', score: 85, price: null, added: '2020-02-10', active: false },
  { name: 'Grace Hopper', city: 'New York', score: null, price: 12.25, added: '2019-12-31', active: true },
  { name: 'Edsger Dijkstra', city: 'Austin', score: 85, price: 3, added: null, active: false },
  { name: 'Barbara Liskov', city: 'Los Angeles', score: 70, price: 7, added: '2020-01-20', active: true },
  { name: 'Donald Knuth', city: 'Milwaukee', score: 95, price: 20, added: '2021-06-01', active: null },
  { name: 'Ada Yonath', city: 'Jerusalem', score: 60, price: 1.5, added: '2020-01-05', active: true },
  { name: 'Tim Berners-Lee', city: 'London', score: 88, price: 5, added: '2020-03-03', active: false },
];

const names = (...idx: number[]) => idx.map((i) => RECORDS[i].name);

/**
 * One behaviour for every SearchIndex adapter: the same snapshot, the same plans, the same totals and
 * records in the same order. `open` gets a loaded engine and returns the adapter under test.
 */
export function searchIndexConformance(open: (engine: SnapshotEngine) => Promise<SearchIndex>): void {
  let engine: SnapshotEngine;
  let search: SearchIndex;
  let entry: IndexEntry;
  let fields: FieldDef[];

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-search-'));
    const file = path.join(dataDir, 'people.json');
    fs.writeFileSync(file, JSON.stringify(RECORDS));
    const built = await buildSnapshot({ name: 'people', file, dataDir, types: {}, views: [] });
    fields = built.fields as FieldDef[];
    entry = { name: 'people', description: '', fields: built.fields, views: [], recordCount: built.recordCount, version: 1, snapshot: built.snapshot, updatedAt: '' };
    engine = new SnapshotEngine(dataDir);
    search = await open(engine);
    await search.prepare(entry);
    await search.retire(entry, null);
  }, 120000);

  afterAll(async () => {
    await search?.drop(entry).catch(() => undefined);
    await search?.close();
    await engine?.close();
  });

  const run = async (query: string, sort: SortKey[] = [], offset = 0, limit = 50) => {
    const where = parseQuery(query, { fields, now: Date.UTC(2020, 0, 15) });
    const page = await search.search(entry, { where, sort, offset, limit });
    return { total: page.total, names: (JSON.parse(page.recordsJson) as Array<{ name: string }>).map((r) => r.name), records: JSON.parse(page.recordsJson) as unknown[] };
  };

  it('infers the fixture types', () => {
    expect(fields).toEqual([
      { name: 'name', type: 'string' },
      { name: 'city', type: 'string' },
      { name: 'score', type: 'integer' },
      { name: 'price', type: 'number' },
      { name: 'added', type: 'date' },
      { name: 'active', type: 'boolean' },
    ]);
  });

  it('returns everything in source order with records as served', async () => {
    const all = await run('*');
    expect(all.total).toBe(8);
    expect(all.names).toEqual(RECORDS.map((r) => r.name));
    expect(all.records[0]).toEqual(RECORDS[0]);
    expect(all.records[3]).toEqual(RECORDS[3]);
  });

  it.each([
    ['ada', names(0, 6)],
    ['LONDON', names(0, 7)],
    ['"new york"', names(2)],
    ['city:los*', names(4)],
    ['name:berners', names(7)],
    ['"berners lee"', names(7)],
    ['name:"tim berners"', names(7)],
    ['score:85', names(1, 3)],
    ['score:[85 TO 90]', names(0, 1, 3, 7)],
    ['score:{85 TO 90}', names(7)],
    ['price:>=9.5', names(0, 2, 5)],
    ['active:true', names(0, 2, 4, 6)],
    ['NOT active:true', names(1, 3, 5, 7)],
    ['added:2020-01-05', names(0, 6)],
    ['added:[2020-01-01 TO 2020-01-31]', names(0, 4, 6)],
    ['added:<TODAY', names(0, 2, 6)],
    ['-added:*', names(3)],
    ['NOT score:85', names(0, 2, 4, 5, 6, 7)],
    ['ada OR city:austin', names(0, 3, 6)],
    ['london -name:ada', names(7)],
    ['(city:london OR city:austin) AND score:>86', names(0, 7)],
    ['nobody', []],
  ])('%s', async (query, expected) => {
    const res = await run(query);
    expect(res.names).toEqual(expected);
    expect(res.total).toBe(expected.length);
  });

  it('sorts with missing values last and ties in source order', async () => {
    expect((await run('*', [{ field: 'score', type: 'integer', direction: 'desc' }])).names).toEqual(names(5, 0, 7, 1, 3, 4, 6, 2));
    expect((await run('*', [{ field: 'score', type: 'integer', direction: 'asc' }])).names).toEqual(names(6, 4, 1, 3, 7, 0, 5, 2));
    expect((await run('*', [{ field: 'city', type: 'string', direction: 'asc' }, { field: 'price', type: 'number', direction: 'desc' }])).names).toEqual(
      names(3, 6, 0, 7, 4, 1, 5, 2),
    );
  });

  it('pages with offset and limit', async () => {
    const p = await run('*', [{ field: 'name', type: 'string', direction: 'asc' }], 2, 3);
    expect(p.total).toBe(8);
    expect(p.names).toEqual(['Alan Turing', 'Barbara Liskov', 'Donald Knuth']);
    expect((await run('*', [], 8, 5)).names).toEqual([]);
  });
}

import type { Config } from '@quarry/config';
import type { IndexEntry } from '@quarry/metadata-store';
import type { SearchIndex } from '@quarry/query';
import type { SnapshotEngine } from '@quarry/snapshots';
import { withClickHouseCopies, type VersionCopies } from './clickhouse-copies';

const entry = (version: number): IndexEntry => ({
  name: 'flights',
  description: '',
  fields: [
    { name: 'origin', type: 'string' },
    { name: 'date', type: 'date' },
  ],
  views: [],
  recordCount: 3,
  version,
  snapshot: `indexes/flights/v${version}.parquet`,
  updatedAt: '',
});

function fakes() {
  const calls: string[] = [];
  const search = {
    prepare: async (e: IndexEntry) => void calls.push(`search.prepare ${e.version}`),
    retire: async (e: IndexEntry) => void calls.push(`search.retire ${e.version}`),
    drop: async (e: IndexEntry) => void calls.push(`search.drop ${e.version}`),
    close: async () => void calls.push('search.close'),
  } as unknown as SearchIndex;
  const engine = {
    table: async () => ({
      columnTypes: new Map([
        ['origin', 'VARCHAR'],
        ['date', 'TIMESTAMP'],
      ]),
    }),
  } as unknown as SnapshotEngine;
  const copies: VersionCopies = {
    createVersion: async (e, file, columns) =>
      void calls.push(`copy ${e.version} ${file} ${columns.map((c) => `${c.name}:${c.duckdbType}`).join(',')}`),
    dropVersionsExcept: async (name, keep) => void calls.push(`drop ${name} except ${keep.join(',')}`),
    close: async () => void calls.push('copies.close'),
  };
  return { calls, search, engine, copies };
}

describe('withClickHouseCopies', () => {
  const config = (over: Partial<Config>) => ({ dataDir: '/data', pivotEngine: 'duckdb', ...over }) as Config;

  it('leaves the search index as it is unless the crosstabs run on a ClickHouse server', async () => {
    const { search, engine, copies } = fakes();
    const open = jest.fn(async () => copies);
    for (const c of [config({}), config({ pivotEngine: 'clickhouse' })]) {
      const got = await withClickHouseCopies(search, c, engine, open);
      expect(got.search).toBe(search);
    }
    expect(open).not.toHaveBeenCalled();
  });

  it('copies a version after it is searchable and before the publish; keeps current, previous and saved ones', async () => {
    const { calls, search, engine, copies } = fakes();
    const server = { url: 'http://ch:8123', database: 'quarry', cluster: undefined };
    const got = await withClickHouseCopies(
      search,
      config({ pivotEngine: 'clickhouse', clickhouse: server }),
      engine,
      async (s) => {
        expect(s).toBe(server);
        return copies;
      },
    );
    await got.search.prepare(entry(7));
    await got.search.retire(entry(7), entry(6), [entry(2)]);
    await got.search.drop(entry(7));
    await got.close();
    expect(calls).toEqual([
      'search.prepare 7',
      'copy 7 /data/indexes/flights/v7.parquet origin:VARCHAR,date:TIMESTAMP',
      'search.retire 7',
      'drop flights except 7,6,2',
      'search.drop 7',
      'drop flights except ',
      'copies.close',
    ]);
  });

  it('a failed copy fails the load before the catalog write', async () => {
    const { search, engine, copies } = fakes();
    copies.createVersion = async () => {
      throw new Error('ClickHouse holds 2 records of flights v7, not 3');
    };
    const got = await withClickHouseCopies(
      search,
      config({
        pivotEngine: 'clickhouse',
        clickhouse: { url: 'http://ch:8123', database: 'quarry', cluster: undefined },
      }),
      engine,
      async () => copies,
    );
    await expect(got.search.prepare(entry(7))).rejects.toThrow('not 3');
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import { DuckDbSearchIndex } from '../duckdb/duckdb-search-index.adapter';
import { documentBatches, type DocumentBatch } from './typesense-documents';
import { slotsOf } from './typesense-filter';

const TITLES = [
  'Émile',
  'emile',
  'Eve',
  'zoe',
  "O'Brien",
  'obrien',
  'o brien',
  '',
  'Zoë',
  null,
  'EMILE',
  'Ångström',
  'angstrom',
  'b',
  'B',
  'a_b',
  'a b',
  'ab',
  null,
  'Zoe',
  'émile',
  '10',
  '9',
];

describe('Typesense documents read from a snapshot', () => {
  let dataDir: string;
  let engine: SnapshotEngine;
  let entry: IndexEntry;
  const slots = () => [...slotsOf(entry.fields).values()];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-ts-docs-'));
    const file = path.join(dataDir, 'docs.json');
    // Written as text: 9007199254740993 must reach the snapshot unrounded.
    const records = TITLES.map(
      (t, i) =>
        `{"title":${JSON.stringify(t)},"big":${i === 3 ? '9007199254740993' : i},"at":"2020-01-01 00:00:00.${String(i).padStart(6, '0')}"}`,
    );
    fs.writeFileSync(file, `[${records.join(',')}]`);
    entry = await builtEntry({ name: 'docs', file, dataDir, types: {}, views: [] });
    engine = new SnapshotEngine(dataDir);
  });

  afterAll(async () => {
    await engine?.close();
  });

  const collect = async (batchSize: number): Promise<DocumentBatch[]> => {
    const out: DocumentBatch[] = [];
    for await (const b of documentBatches(engine, entry, slots(), batchSize)) out.push(b);
    return out;
  };

  const scratchTables = async () =>
    Number(
      (await engine.all(`SELECT count(*) AS n FROM duckdb_tables() WHERE table_name LIKE '__typesense_ranks_%'`))[0].n,
    );

  it('come in keyset batches, every record once and in order, each batch query starting after the last row number', async () => {
    const spy = jest.spyOn(engine, 'all');
    const batches = await collect(5);
    expect(batches.map((b) => b.rowids.length)).toEqual([5, 5, 5, 5, 3]);
    expect(batches.flatMap((b) => b.rowids)).toEqual(TITLES.map((_, i) => i));
    const reads = spy.mock.calls.filter(([sql]) => sql.includes('__json'));
    spy.mockRestore();
    expect(reads).toHaveLength(6);
    for (const [sql] of reads) {
      expect(sql).toMatch(/WHERE __rowid > \$last ORDER BY __rowid LIMIT 5$/);
      expect(sql).not.toMatch(/OFFSET/i);
    }
    expect(reads.map(([, params]) => String((params as { last: bigint }).last))).toEqual([
      '-1',
      '4',
      '9',
      '14',
      '19',
      '22',
    ]);
  });

  it('carry integers beyond 2^53 and timestamps to the microsecond exactly', async () => {
    const lines = (await collect(100))[0].jsonl.split('\n');
    expect(lines[3]).toContain('"k1":9007199254740993');
    expect(lines[7]).toContain(`"k2":${BigInt(Date.UTC(2020, 0, 1)) * 1000n + 7n}`);
  });

  it('rank text values so that sorting by rank gives the embedded engine order, empty text first and missing last', async () => {
    const docs = (await collect(4)).flatMap((b) =>
      b.jsonl.split('\n').map((l) => JSON.parse(l) as { __rowid: number; r0?: number }),
    );
    for (const direction of ['asc', 'desc'] as const) {
      const byRank = [...docs]
        .sort((a, b) => {
          if (a.r0 === undefined || b.r0 === undefined)
            return (a.r0 === undefined ? 1 : 0) - (b.r0 === undefined ? 1 : 0) || a.__rowid - b.__rowid;
          return (direction === 'asc' ? a.r0 - b.r0 : b.r0 - a.r0) || a.__rowid - b.__rowid;
        })
        .map((d) => TITLES[d.__rowid]);
      const page = await new DuckDbSearchIndex(engine).search(entry, {
        where: parseQuery('*', { fields: entry.fields as FieldDef[], now: 0 }),
        sort: [{ field: 'title', type: 'string', direction }],
        offset: 0,
        limit: 100,
      });
      expect(byRank).toEqual((JSON.parse(page.recordsJson) as Array<{ title: string | null }>).map((r) => r.title));
    }
    expect(docs.filter((d) => d.r0 === undefined).map((d) => d.__rowid)).toEqual([9, 18]);
  });

  it('leave no scratch table behind, also when the reader stops early', async () => {
    await collect(7);
    expect(await scratchTables()).toBe(0);
    for await (const b of documentBatches(engine, entry, slots(), 2)) {
      expect(b.rowids).toEqual([0, 1]);
      break;
    }
    expect(await scratchTables()).toBe(0);
  });

  it('refuse a snapshot whose record count differs from the catalog entry', async () => {
    const wrong = { ...entry, recordCount: entry.recordCount + 1 };
    await expect(
      (async () => {
        for await (const b of documentBatches(engine, wrong, slots(), 50)) void b;
      })(),
    ).rejects.toThrow(/has 23 records, the catalog says 24/);
  });
});

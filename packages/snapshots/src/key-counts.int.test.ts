import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { RollupDef } from '@quarry/metadata-store';
import { factsFromJson, FACTS_TABLE, writeAttachable } from './attachable-snapshot';

type Rows = Array<Record<string, unknown>>;

/**
 * A load with rollups reads the key counts of the fields a rollup groups by from the rollup's table:
 * they must be the counts of the records, whatever rollups there are (a coarser or unrelated grain
 * must not be used), blanks and nulls counted as one key.
 */
describe('key counts of a load with rollups', () => {
  let dir: string;
  let parquet: string;
  const fields = [
    { name: 'origin', type: 'string' },
    { name: 'dest', type: 'string' },
    { name: 'when', type: 'date' },
    { name: 'at', type: 'date', grain: 'month' },
    { name: 'on', type: 'date', grain: 'year' },
    { name: 'n', type: 'integer' },
  ];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-key-counts-'));
    parquet = path.join(dir, 'rows.parquet');
    const gen = await DuckDBInstance.create(':memory:');
    const g = await gen.connect();
    await g.run(
      `COPY (SELECT ['LAX', 'SFO', '', NULL, 'JFK'][1 + (i % 5)] AS origin, 'D' || (i % 37) AS dest,
         CASE WHEN i % 13 = 0 THEN NULL ELSE DATE '2023-11-20' + CAST(i % 401 AS INTEGER) END AS "when",
         CASE WHEN i % 17 = 0 THEN NULL ELSE TIMESTAMP '2022-12-31 23:59:59' + to_minutes(i * 997) END AS "at",
         TIMESTAMP '1999-12-31 23:00:00' + to_hours(i * 5) AS "on", i % 23 AS n
       FROM range(3000) r(i)) TO '${parquet}' (FORMAT parquet)`,
    );
    g.closeSync();
    gen.closeSync();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function distinctKeysOf(name: string, rollups: RollupDef[]) {
    const out = path.join(dir, `${name}.duckdb`);
    await writeAttachable(parquet, out, fields, path.join(dir, 'spill'), rollups);
    const db = await DuckDBInstance.create(out, { access_mode: 'READ_ONLY' });
    const c = await db.connect();
    try {
      const [row] = (await c.runAndReadAll(`SELECT facts FROM ${FACTS_TABLE}`)).getRowObjectsJS() as Rows;
      return Object.fromEntries(factsFromJson(String(row.facts)).distinctKeys);
    } finally {
      c.closeSync();
      db.closeSync();
    }
  }

  it('are the records’ own counts, read from a rollup only where its grain tells them', async () => {
    // By hand, in JS over the records: a blank (null or empty) is one key; a date's key at its grain.
    const gen = await DuckDBInstance.create(':memory:');
    const g = await gen.connect();
    const rows = (
      await g.runAndReadAll(
        `SELECT origin, dest, strftime("when", '%Y-%m-%d') AS day, strftime("at", '%Y-%m') AS month, strftime("on", '%Y') AS year, n FROM read_parquet('${parquet}')`,
      )
    ).getRowObjectsJS() as Rows;
    g.closeSync();
    gen.closeSync();
    const keys = (col: string) => new Set(rows.map((r) => (r[col] === null || r[col] === '' ? 'blank' : r[col]))).size;
    const want = {
      origin: keys('origin'),
      dest: keys('dest'),
      when: keys('day'),
      at: keys('month'),
      on: keys('year'),
      n: keys('n'),
    };
    // The data is what the test means: blanks present, days far more than months, months than years.
    expect(want).toEqual({ origin: 4, dest: 37, when: 402, at: 70, on: 3, n: 23 });

    const rollups: RollupDef[] = [
      // Covers origin, at (by month, its grain) and dest (counted distinct).
      {
        name: 'om',
        rows: ['origin'],
        columns: [{ field: 'at', grain: 'month' }],
        totals: [{ kind: 'count' }, { kind: 'countDistinct', field: 'dest' }],
      },
      // Smaller, but a week tells no month, and a year no day: at and when come from elsewhere.
      { name: 'wk', rows: [], columns: [{ field: 'at', grain: 'week' }], totals: [{ kind: 'count' }] },
      { name: 'yr', rows: [], columns: [{ field: 'when', grain: 'year' }], totals: [{ kind: 'sum', field: 'n' }] },
      // A day tells the year: `on` from here.
      { name: 'dy', rows: [], columns: [{ field: 'on', grain: 'day' }], totals: [{ kind: 'count' }] },
    ];
    expect(await distinctKeysOf('with', rollups)).toEqual(want);
    expect(await distinctKeysOf('without', [])).toEqual(want);
    // Each rollup alone too (a field no rollup covers is counted on the records).
    for (const r of rollups) expect([r.name, await distinctKeysOf(r.name, [r])]).toEqual([r.name, want]);
  }, 60_000);
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  factsFromJson,
  FACTS_TABLE,
  RECORDS_TABLE,
  SAMPLE_FIRST_RECORDS,
  SAMPLE_MAX_RECORDS,
  sampleRecords,
  SAMPLE_LEVEL,
  SAMPLE_DATA,
  SAMPLE_TABLE,
  writeAttachable,
} from './attachable-snapshot';

type Rows = Array<Record<string, unknown>>;

/** Writes `n` records (i = 0..n-1, g = i mod 1000) as Parquet, then their attachable form; opens it read-only. */
async function attachableOf(dir: string, n: number, name: string) {
  const parquet = path.join(dir, `${name}.parquet`);
  const gen = await DuckDBInstance.create(':memory:');
  const g = await gen.connect();
  await g.run(
    `COPY (SELECT range AS i, 'g' || (range % 1000) AS g FROM range(${n})) TO '${parquet}' (FORMAT parquet, ROW_GROUP_SIZE 122880)`,
  );
  g.closeSync();
  gen.closeSync();
  const out = path.join(dir, `${name}.duckdb`);
  const fields = [
    { name: 'i', type: 'number' },
    { name: 'g', type: 'string' },
  ];
  await writeAttachable(parquet, out, fields, path.join(dir, 'spill'));
  const db = await DuckDBInstance.create(out, { access_mode: 'READ_ONLY' });
  const c = await db.connect();
  const all = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS() as Rows;
  const [row] = await all(`SELECT facts FROM ${FACTS_TABLE}`);
  const { sample } = factsFromJson(String(row.facts));
  return {
    all,
    sample: sample!,
    close: () => {
      c.closeSync();
      db.closeSync();
    },
  };
}

// The cell-limit estimate reads a sample kept with the version, contiguous, so the
// first read of its pages costs the same at any index size; it must be a uniform sample of real records.
describe('writeAttachable: the sample of records', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-sample-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps every record up to 400,000, then a quarter of them, never more than SAMPLE_MAX_RECORDS', () => {
    expect([150_000, 400_000, 1_000_000, 3_000_000, 8_000_000, 120_000_000].map(sampleRecords)).toEqual([
      150_000,
      400_000,
      400_000,
      750_000,
      SAMPLE_MAX_RECORDS,
      SAMPLE_MAX_RECORDS,
    ]);
  });

  it('keeps real records, its first level a uniform sample spread over the whole file', async () => {
    const n = 2_500_000;
    const v = await attachableOf(dir, n, 'big');
    try {
      // A hash picks each record with probability 625,000 / 2.5M: within 5 standard deviations of the target.
      const want = sampleRecords(n);
      expect(Math.abs(v.sample.records - want)).toBeLessThan(5 * Math.sqrt(want * (1 - want / n)));
      expect(Math.abs(v.sample.first - SAMPLE_FIRST_RECORDS)).toBeLessThan(5 * Math.sqrt(SAMPLE_FIRST_RECORDS));
      const [counts] = await v.all(
        `SELECT count(*) AS rows, count(DISTINCT __rowid) AS records, count(*) FILTER (WHERE ${SAMPLE_LEVEL} = 0) AS first FROM ${SAMPLE_TABLE}`,
      );
      expect(counts).toEqual({
        rows: BigInt(v.sample.records),
        records: BigInt(v.sample.records),
        first: BigInt(v.sample.first),
      });
      // The first level is written first: it fills the first row group, and no later one holds any of it.
      const [levels] = await v.all(
        `SELECT bool_and(${SAMPLE_LEVEL} = 0) FILTER (WHERE rowid < ${v.sample.first}) AS firstAtStart, count(*) FILTER (WHERE rowid >= ${v.sample.first} AND ${SAMPLE_LEVEL} = 0) AS firstLater FROM ${SAMPLE_DATA}`,
      );
      expect(levels).toEqual({ firstAtStart: true, firstLater: 0n });
      // Every row is the record of its number, unchanged.
      const [changed] = await v.all(
        `SELECT count(*) AS n FROM ${SAMPLE_TABLE} s JOIN ${RECORDS_TABLE} r USING (__rowid) WHERE s.i IS DISTINCT FROM r.i OR s.g IS DISTINCT FROM r.g OR s."__w:g" IS DISTINCT FROM r."__w:g"`,
      );
      expect(changed.n).toBe(0n);
      // The first level is no prefix of the file: each tenth of the records holds a tenth of it.
      const tenths = await v.all(
        `SELECT floor(i * 10 / ${n}) AS tenth, count(*) AS k FROM ${SAMPLE_TABLE} WHERE ${SAMPLE_LEVEL} = 0 GROUP BY 1 ORDER BY 1`,
      );
      expect(tenths).toHaveLength(10);
      for (const t of tenths) expect(Math.abs(Number(t.k) - v.sample.first / 10)).toBeLessThan(v.sample.first / 50);
      // Within a level, in record order (what compresses like the records table).
      const [unordered] = await v.all(
        `SELECT count(*) AS n FROM (SELECT __rowid - lag(__rowid) OVER (PARTITION BY ${SAMPLE_LEVEL} ORDER BY rowid) AS step FROM ${SAMPLE_DATA}) WHERE step <= 0`,
      );
      expect(unordered.n).toBe(0n);
    } finally {
      v.close();
    }
  }, 120_000);

  it('keeps every record of a small version, and the same sample when the same file is loaded again', async () => {
    const a = await attachableOf(dir, 150_000, 'small-a');
    const b = await attachableOf(dir, 150_000, 'small-b');
    try {
      expect(a.sample.records).toBe(150_000);
      expect(a.sample).toEqual(b.sample);
      const chosen = async (v: typeof a) =>
        (await v.all(`SELECT __rowid FROM ${SAMPLE_TABLE} WHERE ${SAMPLE_LEVEL} = 0 ORDER BY 1`)).map((r) => r.__rowid);
      const first = await chosen(a);
      expect(first.length).toBe(a.sample.first);
      expect(first.length).toBeGreaterThan(SAMPLE_FIRST_RECORDS * 0.95);
      expect(first.length).toBeLessThan(SAMPLE_FIRST_RECORDS * 1.05);
      expect(await chosen(b)).toEqual(first);
    } finally {
      a.close();
      b.close();
    }
  }, 60_000);
});

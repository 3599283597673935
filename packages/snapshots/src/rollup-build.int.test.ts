import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { RollupDef } from '@quarry/metadata-store';
import { attachableFile } from './attachable-snapshot';
import { buildSnapshot } from './build-snapshot';

/** Rollups as a load builds them: their tables against DuckDB's own GROUP BY, and the faults. */
describe('rollups built at load', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-rollup-build-'));
    file = path.join(dir, 'rows.csv');
    const lines = ['origin,at,delay,dist'];
    for (let i = 0; i < 5000; i++)
      lines.push(
        `${['LAX', 'SFO', '', 'JFK'][Math.floor(i / 7) % 4]},2024-${String(1 + (i % 12)).padStart(2, '0')}-0${1 + (i % 9)} ${String(i % 24).padStart(2, '0')}:00:00,${i % 50 === 0 ? '' : (i % 97) - 20},${(i % 300) / 8}`,
      );
    fs.writeFileSync(file, lines.join('\n'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const rollup: RollupDef = {
    name: 'om',
    rows: ['origin'],
    columns: [{ field: 'at', grain: 'month' }],
    totals: [{ kind: 'count' }, { kind: 'sum', field: 'delay' }, { kind: 'min', field: 'dist' }],
  };

  it('writes each group of the records once, its partials those of a GROUP BY by hand', async () => {
    const dataDir = path.join(dir, 'ok');
    // Small enough to stay a Parquet file alone, but an index with rollups always gets its DuckDB file.
    const built = await buildSnapshot({ name: 'x', file, dataDir, types: {}, views: [], rollups: [rollup] });
    expect(built.rollups).toEqual([rollup]);
    const db = attachableFile(path.join(dataDir, built.snapshot));
    const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
    const c = await inst.connect();
    try {
      const read = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS();
      const got = await read(
        `SELECT origin, strftime("at", '%Y-%m') AS m, __n AS n, "__sum:delay" AS s, "__min:dist" AS lo FROM quarry_rollup_0 ORDER BY ALL`,
      );
      const want = await read(
        `SELECT origin, strftime("at", '%Y-%m') AS m, count(*) AS n, sum(delay) AS s, min(dist) AS lo FROM read_csv('${file}') GROUP BY ALL ORDER BY ALL`,
      );
      expect(got.length).toBe(48);
      expect(got).toEqual(want);
    } finally {
      c.closeSync();
      inst.closeSync();
    }
  });

  it('a rollup that fails to build fails the load and leaves no file', async () => {
    const dataDir = path.join(dir, 'bad');
    const broken: RollupDef = { ...rollup, columns: [{ field: 'at', grain: 'fortnight' }] };
    await expect(buildSnapshot({ name: 'x', file, dataDir, types: {}, views: [], rollups: [broken] })).rejects.toThrow(
      /rollup "om"/,
    );
    expect(fs.readdirSync(path.join(dataDir, 'indexes', 'x'))).toEqual([]);
  });

  it('a rollup on a field the file no longer has (or no longer a number) is dropped, the others built', async () => {
    const dataDir = path.join(dir, 'gone');
    const gone: RollupDef = { name: 'gone', rows: ['origin'], columns: [], totals: [{ kind: 'sum', field: 'cost' }] };
    const text: RollupDef = { name: 'text', rows: ['at'], columns: [], totals: [{ kind: 'max', field: 'origin' }] };
    const built = await buildSnapshot({
      name: 'x',
      file,
      dataDir,
      types: {},
      views: [],
      rollups: [gone, rollup, text],
    });
    expect(built.rollups).toEqual([rollup]);
    expect(built.droppedRollups).toEqual([
      { name: 'gone', missing: ['cost'] },
      { name: 'text', missing: ['origin'] },
    ]);
  });

  it('stores a sum that fits 64 bits as BIGINT (quick to read), one past it as HUGEINT; both exact', async () => {
    const dataDir = path.join(dir, 'wide');
    const wide = path.join(dir, 'wide.csv');
    // Group "big" sums past 2^63 (two values of 5e18); group "small" stays far within it.
    const big = 5_000_000_000_000_000_000n;
    fs.writeFileSync(wide, ['k,small,huge', `a,1,${big}`, `a,-3,${big}`, 'b,7,-5', 'b,,2'].join('\n'));
    const sums: RollupDef = {
      name: 'sums',
      rows: ['k'],
      columns: [],
      totals: [
        { kind: 'sum', field: 'small' },
        { kind: 'sum', field: 'huge' },
      ],
    };
    const built = await buildSnapshot({ name: 'w', file: wide, dataDir, types: {}, views: [], rollups: [sums] });
    const inst = await DuckDBInstance.create(attachableFile(path.join(dataDir, built.snapshot)), {
      access_mode: 'READ_ONLY',
    });
    const c = await inst.connect();
    try {
      const read = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS();
      const types = await read(
        `SELECT column_name AS c, column_type AS t FROM (DESCRIBE quarry_rollup_0) WHERE column_name LIKE '__sum:%' ORDER BY 1`,
      );
      expect(types).toEqual([
        { c: '__sum:huge', t: 'HUGEINT' },
        { c: '__sum:small', t: 'BIGINT' },
      ]);
      const got = await read(`SELECT k, "__sum:small" AS s, "__sum:huge" AS h FROM quarry_rollup_0 ORDER BY k`);
      expect(got).toEqual([
        { k: 'a', s: -2n, h: 2n * big },
        { k: 'b', s: 7n, h: -3n },
      ]);
      // Re-added as a crosstab re-adds them: the same exact type and totals as the records'.
      const [again] = await read(
        `SELECT typeof(sum("__sum:small")) AS t, sum("__sum:small") AS s, sum("__sum:huge") AS h FROM quarry_rollup_0`,
      );
      expect(again).toEqual({ t: 'HUGEINT', s: 5n, h: 2n * big - 3n });
    } finally {
      c.closeSync();
      inst.closeSync();
    }
  });
});

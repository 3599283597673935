import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { settled } from '@quarry/testkit';
import { SnapshotEngine } from './snapshot-engine';
import { ident } from './sql';

const fields = [
  { name: 'code', type: 'string' },
  { name: 'n', type: 'integer' },
];

/** A Parquet snapshot of `rows` records: a few repeated codes and a counter. */
async function writeSnapshot(file: string, rows: number): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(
    `COPY (SELECT ['SFO', 'LAX', 'ORD'][1 + range % 3] AS code, range AS n FROM range(${rows})) TO '${file}' (FORMAT parquet)`,
  );
  c.closeSync();
  db.closeSync();
}

describe('SnapshotEngine storage', () => {
  let dir: string;
  let engine: SnapshotEngine;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-storage-'));
    await writeSnapshot(path.join(dir, 'a.parquet'), 300_000);
    await writeSnapshot(path.join(dir, 'b.parquet'), 300_000);
  });
  beforeEach(() => {
    engine = new SnapshotEngine(dir);
  });
  afterEach(async () => {
    await engine.close();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps a loaded snapshot compressed (dictionary for repeated text, not plain rows)', async () => {
    const { table } = await engine.table({ name: 'a', version: 1, snapshot: 'a.parquet', fields });
    const methods = await engine.all(
      `SELECT DISTINCT column_name AS col, compression FROM pragma_storage_info('${table}_db.main.${table}')`,
    );
    const of = (col: string) => methods.filter((m) => m.col === col).map((m) => String(m.compression));
    expect(of('code').some((m) => /DICT|FSST/.test(m))).toBe(true);
    expect(of('code')).not.toContain('Uncompressed');
    expect(await engine.all(`SELECT count(*) AS n, count(DISTINCT code) AS codes FROM ${ident(table)}`)).toEqual([
      { n: 300_000n, codes: 3n },
    ]);
  });

  it('loads one snapshot while a long query runs on another (the compression waits for nobody)', async () => {
    const a = await engine.table({ name: 'a', version: 1, snapshot: 'a.parquet', fields });
    const long = engine.all(`SELECT count(*) AS n FROM ${ident(a.table)} x, range(2000) r WHERE x.n + r.range = -1`);
    await new Promise((r) => setTimeout(r, 50));
    const b = await engine.table({ name: 'b', version: 1, snapshot: 'b.parquet', fields });
    expect(await engine.all(`SELECT count(*) AS n FROM ${ident(b.table)}`)).toEqual([{ n: 300_000n }]);
    expect(await long).toEqual([{ n: 0n }]);
  }, 60000);

  it('a query running on a retired version finishes, and the retired store is then gone', async () => {
    const v1 = await engine.table({ name: 'a', version: 1, snapshot: 'a.parquet', fields });
    const running = engine.all(
      `SELECT count(*) AS n FROM ${ident(v1.table)} x, range(1000) r WHERE x.n + r.range = -1`,
    );
    await new Promise((r) => setTimeout(r, 50));
    await engine.table({ name: 'a', version: 2, snapshot: 'b.parquet', fields });
    expect(await running).toEqual([{ n: 0n }]);
    // Detached in the background once the query ends: wait for it instead of guessing how long it takes.
    const stores = () =>
      engine.all(`SELECT database_name FROM duckdb_databases() WHERE database_name = '${v1.table}_db'`);
    expect(await settled(stores, [])).toEqual([]);
  }, 60000);
});

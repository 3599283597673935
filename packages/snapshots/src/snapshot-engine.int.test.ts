import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { settled } from '@quarry/testkit';
import { SnapshotEngine, type SnapshotRef } from './snapshot-engine';

const fields = [{ name: 'city', type: 'string' }];

/** Writes a one-column Parquet snapshot holding these cities, as the loader would. */
async function writeSnapshot(dir: string, file: string, cities: string[]): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const values = cities.map((x) => `('${x}')`).join(', ');
  await c.run(`COPY (SELECT * FROM (VALUES ${values}) t(city)) TO '${path.join(dir, file)}' (FORMAT parquet)`);
  c.closeSync();
  db.closeSync();
}

describe('SnapshotEngine', () => {
  let dir: string;
  let engine: SnapshotEngine;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-engine-'));
    engine = new SnapshotEngine(dir);
  });
  afterEach(async () => {
    await engine.close();
  });

  const cities = async (ref: SnapshotRef, on: SnapshotEngine = engine) => {
    const { table } = await on.table(ref);
    return (await on.all(`SELECT city FROM "${table}" ORDER BY __rowid`)).map((r) => r.city);
  };

  it('serves a reload from its own file even when name and version are those of a dropped copy', async () => {
    await writeSnapshot(dir, 'a.parquet', ['Secret Town', 'Oslo']);
    await writeSnapshot(dir, 'b.parquet', ['Oslo']);
    // Before versions were kept across drops, a drop + reload published version 1 again.
    expect(await cities({ name: 't1', version: 1, snapshot: 'a.parquet', fields })).toEqual(['Secret Town', 'Oslo']);
    expect(await cities({ name: 't1', version: 1, snapshot: 'b.parquet', fields })).toEqual(['Oslo']);
  });

  it('retires older versions of a name once a newer one is loaded, and forgets a dropped name', async () => {
    await writeSnapshot(dir, 'a.parquet', ['A']);
    await writeSnapshot(dir, 'b.parquet', ['B']);
    const tables = async () =>
      (await engine.all("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'snap_t1_%'")).length;
    await cities({ name: 't1', version: 1, snapshot: 'a.parquet', fields });
    await cities({ name: 't1', version: 2, snapshot: 'b.parquet', fields });
    // Retiring closes in the background: wait for it instead of guessing how long it takes.
    expect(await settled(tables, 1)).toBe(1);
    engine.release('t1');
    expect(await settled(tables, 0)).toBe(0);
  });

  it('keeps the newest version and the last earlier one asked for (a saved report), no more', async () => {
    await writeSnapshot(dir, 'a.parquet', ['A']);
    await writeSnapshot(dir, 'b.parquet', ['B']);
    await writeSnapshot(dir, 'c.parquet', ['C']);
    const loaded = async () =>
      (await engine.all("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'snap_t1_%'"))
        .map((r) => String(r.table_name).split('_')[2])
        .sort();
    expect(await cities({ name: 't1', version: 3, snapshot: 'c.parquet', fields })).toEqual(['C']);
    expect(await cities({ name: 't1', version: 1, snapshot: 'a.parquet', fields })).toEqual(['A']);
    expect(await settled(loaded, ['1', '3'])).toEqual(['1', '3']);
    expect(await cities({ name: 't1', version: 2, snapshot: 'b.parquet', fields })).toEqual(['B']);
    expect(await settled(loaded, ['2', '3'])).toEqual(['2', '3']);
    // The newest one answers throughout, and the earlier one asked for again is read again.
    expect(await cities({ name: 't1', version: 3, snapshot: 'c.parquet', fields })).toEqual(['C']);
    expect(await cities({ name: 't1', version: 1, snapshot: 'a.parquet', fields })).toEqual(['A']);
    expect(await settled(loaded, ['1', '3'])).toEqual(['1', '3']);
  });

  it('interrupts a statement inside DuckDB when its signal aborts, and answers with the abort reason', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(AppError.timeout('ExecuteQuery ran past its deadline and was cancelled')), 200);
    // Billions of rows: minutes of work unless interrupted.
    const slow = engine.all(
      'SELECT count(*) AS n FROM range(100000000000) a WHERE a.range % 7 = 3',
      undefined,
      controller.signal,
    );
    await expect(slow).rejects.toMatchObject({ code: 'TIMEOUT', detail: expect.stringContaining('deadline') });
    expect(Date.now() - started).toBeLessThan(5000);
    // The engine is free for the next caller.
    expect(await engine.all('SELECT 42 AS n')).toEqual([{ n: 42 }]);
  });

  it('refuses at once when the signal has already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(engine.all('SELECT 1', undefined, controller.signal)).rejects.toMatchObject({ code: 'TIMEOUT' });
  });
  it('a close waits for the calls under way, never closing DuckDB under a connect; later calls open it again', async () => {
    await writeSnapshot(dir, 'a.parquet', ['Oslo', 'Bergen']);
    // Before, a call's connect still queued when the instance closed read freed memory: SIGSEGV in
    // duckdb_connect (a drop's clean-up, or a version read in the background, as a test or a service ended).
    const ref: SnapshotRef = { name: 'towns', version: 1, snapshot: 'a.parquet', fields };
    for (let i = 0; i < 20; i++) {
      const e = new SnapshotEngine(dir);
      const table = e.table(ref);
      const under = Promise.all([
        table.then(({ table: t }) => e.all(`SELECT count(*) AS n FROM "${t}"`)),
        e.all('SELECT 42 AS n'),
        e.withConnection(async (c) => (await c.runAndReadAll('SELECT 7 AS n')).getRowObjectsJS()),
      ]);
      const closed = e.close();
      // A call made while the instance closes waits, then runs on a new instance.
      const during = e.all('SELECT 8 AS n');
      await closed;
      const [[count], [answer], [seven]] = await under;
      expect([count.n, answer.n, seven.n]).toEqual([2n, 42, 7]);
      expect(await during).toEqual([{ n: 8 }]);
      // Reopened after the close (the export engine closes between exports): the version is read again.
      expect(await cities(ref, e)).toEqual(['Oslo', 'Bergen']);
      await e.close();
    }
  });
});

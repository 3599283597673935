import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { AppError } from '@quarry/errors';
import { words } from '@quarry/query-language';
import { settled } from '@quarry/testkit';
import { attachableFile, RECORDS_DATA, RECORDS_TABLE } from './attachable-snapshot';
import { buildSnapshot } from './build-snapshot';
import { SnapshotEngine, type SnapshotRef } from './snapshot-engine';

/** Loads `cities` as an index the way the loader does, attachable or not. */
async function load(dataDir: string, name: string, cities: string[], attach: boolean): Promise<SnapshotRef> {
  const file = path.join(dataDir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(cities.map((city, i) => ({ city, n: i }))));
  const built = await buildSnapshot({
    name,
    file,
    dataDir,
    types: {},
    views: [],
    attachMinRecords: attach ? 0 : Infinity,
  });
  return { name, version: 1, snapshot: built.snapshot, fields: built.fields };
}

describe('SnapshotEngine: attached snapshots, readiness and the index budget', () => {
  let dir: string;
  const engines: SnapshotEngine[] = [];
  const engine = (options = {}) => {
    const e = new SnapshotEngine(dir, options);
    engines.push(e);
    return e;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-attach-'));
  });
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cities = async (e: SnapshotEngine, ref: SnapshotRef) => {
    const { table } = await e.table(ref);
    return (await e.all(`SELECT city FROM "${table}" ORDER BY __rowid`)).map((r) => r.city);
  };

  it('counts the keys of a date field at its own grain at load, blank dates one key', async () => {
    const file = path.join(dir, 'visits.json');
    const at = ['2024-01-05 10:00:00', '2024-01-28 23:00:00', '2024-03-01 00:00:00', null, '2023-12-31 12:00:00'];
    const on = ['2024-01-05', '2024-01-05', '2024-01-06', '2024-02-01', null];
    fs.writeFileSync(file, JSON.stringify(at.map((a, i) => ({ at: a, on: on[i] }))));
    const built = await buildSnapshot({
      name: 'visits',
      file,
      dataDir: dir,
      types: {},
      grains: { at: 'month' },
      views: [],
      attachMinRecords: 0,
    });
    expect(built.fields.map((f) => [f.name, f.type, f.grain])).toEqual([
      ['at', 'date', 'month'],
      ['on', 'date', undefined],
    ]);
    const { distinctKeys } = await engine().table({
      name: 'visits',
      version: 1,
      snapshot: built.snapshot,
      fields: built.fields,
    });
    // at by month: 2023-12, 2024-01, 2024-03 and (blank); on by day: 01-05, 01-06, 02-01 and (blank).
    expect(distinctKeys?.get('at')).toBe(4);
    expect(distinctKeys?.get('on')).toBe(4);
  });

  it('a large version is written in DuckDB format at load, and two processes attach the one file read-only at once', async () => {
    const ref = await load(dir, 'towns', ['Oslo', 'San José', 'oslo'], true);
    expect(fs.existsSync(path.join(dir, attachableFile(ref.snapshot)))).toBe(true);
    const [a, b] = [engine(), engine()];
    const [ta, tb] = await Promise.all([a.table(ref), b.table(ref)]);
    expect([ta.storage, tb.storage]).toEqual(['attached', 'attached']);
    expect(await cities(a, ref)).toEqual(['Oslo', 'San José', 'oslo']);
    expect(await cities(b, ref)).toEqual(['Oslo', 'San José', 'oslo']);
    // What the load learnt comes back with it: single-word values and keys per field (blank merged).
    expect(ta.singleWord.get('city')).toBeUndefined();
    expect(ta.distinctKeys?.get('city')).toBe(3);
    expect(ta.distinctKeys?.get('n')).toBe(3);
    // Read-only: the shared file cannot be written through it.
    await expect(a.all(`DELETE FROM "${ta.table}"`)).rejects.toThrow();
  });

  it("a single-word field stores no words column (computed when read), another field stores its own; both hold every record's words", async () => {
    const codes = ['SFO', 'sfo', 'Zürich', 'A1', '', 'Åre'];
    const file = path.join(dir, 'codes.json');
    const titles = ['Star Wars', 'star-wars!', 'O’Neil', '', 'x', 'New  York'];
    fs.writeFileSync(
      file,
      JSON.stringify(
        codes.map((code, i) => ({ code, title: titles[i] })).concat([{ code: null, title: null }] as never),
      ),
    );
    const built = await buildSnapshot({ name: 'codes', file, dataDir: dir, types: {}, views: [], attachMinRecords: 0 });
    const ref = { name: 'codes', version: 1, snapshot: built.snapshot, fields: built.fields };
    const e = engine();
    const t = await e.table(ref);
    expect([...t.singleWord.keys()]).toEqual(['code']);
    const rows = await e.all(
      `SELECT code, title, "__w:code" AS wc, "__w:title" AS wt FROM "${t.table}" ORDER BY __rowid`,
    );
    // The words text as the query language splits it, padded: independent of the SQL that writes it.
    const padded = (v: unknown) => (v === null ? null : ` ${words(String(v)).join(' ')} `);
    expect(rows.map((r) => [r.wc, r.wt])).toEqual(rows.map((r) => [padded(r.code), padded(r.title)]));
    const db = await DuckDBInstance.create(path.join(dir, attachableFile(ref.snapshot)), { access_mode: 'READ_ONLY' });
    const c = await db.connect();
    try {
      const [{ sql }] = (
        await c.runAndReadAll(`SELECT sql FROM duckdb_tables() WHERE table_name = '${RECORDS_DATA}'`)
      ).getRowObjectsJS();
      expect(String(sql)).not.toContain('__w:code');
      expect(String(sql)).toContain('"__w:title" VARCHAR');
    } finally {
      c.closeSync();
      db.closeSync();
    }
  });

  it('a version written with every words column stored (before they could be computed) is still read and matched', async () => {
    const ref = await load(dir, 'old', ['Oslo', 'San José', 'oslo', 'SFO'], true);
    const at = path.join(dir, attachableFile(ref.snapshot));
    // Rewritten as older loads wrote it: the computed words column materialised as a stored one.
    const db = await DuckDBInstance.create(at);
    const c = await db.connect();
    await c.run(`CREATE TABLE stored AS SELECT * FROM ${RECORDS_TABLE}`);
    await c.run(`DROP VIEW ${RECORDS_TABLE}`);
    await c.run(`ALTER TABLE stored RENAME TO ${RECORDS_TABLE}`);
    const [{ sql }] = (
      await c.runAndReadAll(`SELECT sql FROM duckdb_tables() WHERE table_name = '${RECORDS_TABLE}'`)
    ).getRowObjectsJS();
    expect(String(sql)).toContain('"__w:city" VARCHAR');
    c.closeSync();
    db.closeSync();
    const e = engine();
    const t = await e.table(ref);
    expect(t.storage).toBe('attached');
    const hits = await e.all(`SELECT city FROM "${t.table}" WHERE "__w:city" LIKE '% oslo %' ORDER BY __rowid`);
    expect(hits.map((r) => r.city)).toEqual(['Oslo', 'oslo']);
  });

  it('a small version is read into memory; the Parquet file alone is written', async () => {
    const ref = await load(dir, 'small', ['Bergen'], false);
    expect(fs.existsSync(path.join(dir, attachableFile(ref.snapshot)))).toBe(false);
    const e = engine();
    expect((await e.table(ref)).storage).toBe('memory');
    expect(await cities(e, ref)).toEqual(['Bergen']);
  });

  it('a truncated snapshot file answers an error naming it; the other indexes are still served', async () => {
    const good = await load(dir, 'good', ['Oslo'], true);
    const bad = await load(dir, 'bad', ['Rome', 'Paris'], true);
    const file = path.join(dir, attachableFile(bad.snapshot));
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 3));
    const e = engine();
    const err = await e.table(bad).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining(path.basename(file)) });
    expect((err as AppError).message).toContain('"bad"');
    expect(await cities(e, good)).toEqual(['Oslo']);
    // Asked again, it is tried again (nothing half-open is kept), and still refused.
    await expect(e.table(bad)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('is warm only once every published version is open, and an unreadable one does not hold it back', async () => {
    const refs = [await load(dir, 'w1', ['A'], true), await load(dir, 'w2', ['B'], false)];
    fs.writeFileSync(path.join(dir, attachableFile(refs[0].snapshot)), 'not a database');
    const e = engine();
    let release: () => void = () => undefined;
    const listed = new Promise<SnapshotRef[]>((resolve) => (release = () => resolve(refs)));
    const warned: string[] = [];
    const log = { warn: (obj: object) => warned.push((obj as { index: string }).index) };
    // The catalog has not answered yet: not warm, and the check does not wait past its bound.
    await expect(e.assertWarm(() => listed, log, 50)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    release();
    // A hang guard, not a target: opening both versions can take seconds on a loaded machine.
    await e.assertWarm(() => listed, log, 30_000);
    expect(await e.opened()).toEqual(['w2@1 (memory)']);
    expect(warned).toEqual(['w1']);
  });

  it('lets the least recently used versions read into memory go past the index budget, and reads them in again', async () => {
    const refs = [
      await load(dir, 'b1', ['x1'], false),
      await load(dir, 'b2', ['x2'], false),
      await load(dir, 'b3', ['x3'], true),
    ];
    // One in-memory version fits, not two; attached ones count nothing.
    const one = (await engine().table(refs[0])).heldBytes;
    expect(one).toBeGreaterThan(0);
    const e = engine({ indexBudgetBytes: Math.floor(one * 1.5) });
    // Evictions close in the background: each step waits for the versions it leaves open.
    expect(await cities(e, refs[0])).toEqual(['x1']);
    expect(await settled(() => e.opened(), ['b1@1 (memory)'])).toEqual(['b1@1 (memory)']);
    expect(await cities(e, refs[1])).toEqual(['x2']);
    expect(await settled(() => e.opened(), ['b2@1 (memory)'])).toEqual(['b2@1 (memory)']);
    expect(await cities(e, refs[2])).toEqual(['x3']);
    expect(await settled(() => e.opened(), ['b2@1 (memory)', 'b3@1 (attached)'])).toEqual([
      'b2@1 (memory)',
      'b3@1 (attached)',
    ]);
    expect(await cities(e, refs[0])).toEqual(['x1']);
    expect(await settled(() => e.opened(), ['b3@1 (attached)', 'b1@1 (memory)'])).toEqual([
      'b3@1 (attached)',
      'b1@1 (memory)',
    ]);
  });
});

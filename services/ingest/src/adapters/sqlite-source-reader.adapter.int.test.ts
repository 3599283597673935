import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { eventually, failure, signal, stagedPast, stagingFolder } from '../../../../tests/support/source-reader-cases';
import { loadStaged, readStagedCsv, stagedObjects } from '../../../../tests/support/staged-load';
import type { SourceSpec } from '../ports/source-reader.port';
import { SqliteSourceReader } from './sqlite-source-reader.adapter';

describe('SqliteSourceReader on a real SQLite file', () => {
  const staging = stagingFolder('q-sqlite-source-');
  const { staged } = staging;
  let dir: string;
  let dbFile: string;
  const reader = new SqliteSourceReader();
  const spec = (over: Partial<SourceSpec> = {}): SourceSpec => ({
    kind: 'sqlite',
    connection: { url: dbFile },
    ...over,
  });
  const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

  beforeEach(() => {
    dir = staging.dir();
    dbFile = path.join(dir, 'source.db');
    const db = new Database(dbFile);
    db.exec(`CREATE TABLE t (id INTEGER, big BIGINT, r REAL, mixed REAL, txt TEXT, n NUMERIC, anything, b BLOB);
             CREATE TABLE empty (id INTEGER, name TEXT);`);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    insert.run(
      1n,
      9007199254740993n,
      0.1,
      1.5,
      'He said "hi, there",\nthen left; a | b',
      '12.50',
      'x',
      Buffer.from([0, 255]),
    );
    insert.run(2n, 9223372036854775807n, -1e300, 'not a number', '', 7n, 3.25, null);
    insert.run(3n, -9223372036854775808n, null, null, null, null, null, null);
    insert.run(null, 4n, null, null, 'no cursor', null, null, null);
    db.close();
  });

  it('writes every integer exactly (BigInt), and types columns conservatively', async () => {
    const file = staged();
    const read = await reader.read(spec({ table: 't' }), { file, signal: signal() });
    expect(read).toMatchObject({ file, format: 'csv', rows: 4 });
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    expect(read.columns).toEqual([
      { name: 'id', dbType: 'INTEGER' },
      { name: 'big', dbType: 'BIGINT' },
      { name: 'r', dbType: 'REAL', type: 'number' },
      // A REAL column holding text: SQLite keeps it, so no type is claimed.
      { name: 'mixed', dbType: 'REAL' },
      { name: 'txt', dbType: 'TEXT', type: 'string' },
      { name: 'n', dbType: 'NUMERIC' },
      { name: 'anything', dbType: '' },
      { name: 'b', dbType: 'BLOB' },
    ]);
    const rows = stagedObjects(file);
    expect(rows.map((r) => r.big)).toEqual(['9007199254740993', '9223372036854775807', '-9223372036854775808', '4']);
    expect(rows[0]).toEqual({
      id: '1',
      big: '9007199254740993',
      r: '0.1',
      mixed: '1.5',
      txt: 'He said "hi, there",\nthen left; a | b',
      n: '12.5',
      anything: 'x',
      b: '\\x00ff',
    });
    expect(rows[1]).toMatchObject({ r: '-1e+300', mixed: 'not a number', n: '7', anything: '3.25', b: '' });
    const loaded = await loadStaged(file, read.columns);
    expect(loaded.rows.map((r) => r.big)).toEqual([
      '9007199254740993',
      '9223372036854775807',
      '-9223372036854775808',
      '4',
    ]);
    expect(loaded.fields.find((f) => f.name === 'r')?.type).toBe('number');
  });

  it('writes a file of one column whose values are missing as records the loader counts', async () => {
    const file = staged();
    const read = await reader.read(spec({ query: 'SELECT anything AS only FROM t' }), { file, signal: signal() });
    expect(read.rows).toBe(4);
    expect(fs.readFileSync(file, 'utf8')).toBe('"only"\nx\n3.25\n""\n""\n');
    const loaded = await loadStaged(file, read.columns);
    expect(loaded.rows.map((r) => r.only)).toEqual(['x', '3.25', null, null]);
  });

  it('opens the file read-only: it is the same file, byte for byte, after the read', async () => {
    const before = { hash: digest(dbFile), mtime: fs.statSync(dbFile).mtimeMs };
    await reader.read(spec({ query: 'SELECT * FROM t' }), { file: staged(), signal: signal() });
    await reader.read(spec({ table: 't' }), { file: staged(), cursor: { column: 'id', after: '1' }, signal: signal() });
    const twoStatements = await failure(
      reader.read(spec({ query: 'SELECT 1; DROP TABLE t' }), { file: staged(), signal: signal() }),
    );
    expect(twoStatements.code).toBe('INVALID_ARGUMENT');
    expect(fs.existsSync(staging.last())).toBe(false);
    expect({ hash: digest(dbFile), mtime: fs.statSync(dbFile).mtimeMs }).toEqual(before);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('source.db'))).toEqual(['source.db']);
  });

  it('refuses what is not an existing regular file, clearly', async () => {
    const cases: Array<[string, RegExp]> = [
      [path.join(dir, 'missing.db'), /^The sqlite source .*missing\.db does not exist$/],
      [dir, /^The sqlite source .* is not a regular file$/],
      ['source.db', /^A sqlite source's path must be absolute: "source\.db" is relative$/],
      [':memory:', /must be absolute/],
      ['https://example.com/x.db', /is not a path or a file: URL/],
      [`${pathToFileURL(dbFile).href}?mode=rwc`, /takes no query/],
    ];
    for (const [url, message] of cases) {
      const file = staged();
      const err = await failure(reader.read(spec({ connection: { url }, table: 't' }), { file, signal: signal() }));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.detail).toMatch(message);
      expect(fs.existsSync(file)).toBe(false);
    }
    const notDb = path.join(dir, 'notes.txt');
    fs.writeFileSync(notDb, 'just text, not a database\n'.repeat(100));
    const err = await failure(
      reader.read(spec({ connection: { url: notDb }, table: 't' }), { file: staged(), signal: signal() }),
    );
    expect(err.detail).toBe('The sqlite source notes.txt is not a SQLite database');
    // A file: URL names the same file.
    const viaUrl = await reader.read(spec({ connection: { url: pathToFileURL(dbFile).href }, table: 't' }), {
      file: staged(),
      signal: signal(),
    });
    expect(viaUrl.rows).toBe(4);
  });

  it('reads only rows past the cursor bound (a parameter), in order, leaving out null cursors', async () => {
    const all = await reader.read(spec({ table: 't' }), {
      file: staged(),
      cursor: { column: 'big' },
      signal: signal(),
    });
    expect(stagedObjects(all.file).map((r) => r.big)).toEqual([
      '-9223372036854775808',
      '4',
      '9007199254740993',
      '9223372036854775807',
    ]);
    expect(all.cursorMax).toBe('9223372036854775807');
    const past = await reader.read(spec({ table: 't' }), {
      file: staged(),
      cursor: { column: 'big', after: '9007199254740992' },
      signal: signal(),
    });
    expect(stagedObjects(past.file).map((r) => r.big)).toEqual(['9007199254740993', '9223372036854775807']);
    const byId = await reader.read(spec({ table: 't' }), {
      file: staged(),
      cursor: { column: 'id' },
      signal: signal(),
    });
    expect(byId.rows).toBe(3);
    const sneaky = await reader.read(spec({ table: 't' }), {
      file: staged(),
      cursor: { column: 'txt', after: "'; DROP TABLE t; --" },
      signal: signal(),
    });
    expect(stagedObjects(sneaky.file).map((r) => r.txt)).toEqual([
      'He said "hi, there",\nthen left; a | b',
      'no cursor',
    ]);
    const db = new Database(dbFile, { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 4 });
    db.close();
  });

  it('writes a header alone for no rows, and reports a failing query', async () => {
    const file = staged();
    const read = await reader.read(spec({ table: 'empty' }), { file, signal: signal() });
    expect(read.rows).toBe(0);
    expect(readStagedCsv(file)).toEqual({ header: ['id', 'name'], records: [] });
    const bad = staged();
    const err = await failure(reader.read(spec({ query: 'SELECT nope FROM t' }), { file: bad, signal: signal() }));
    expect(err.detail).toBe('The source query failed: no such column: nope');
    expect(fs.existsSync(bad)).toBe(false);
  });

  it('stops between rows on an aborted signal, leaving no file', async () => {
    const file = staged();
    const ctl = new AbortController();
    const reading = reader.read(
      spec({
        query:
          "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT 3000000) SELECT n, printf('%100s', 'x') AS pad FROM s",
      }),
      { file, signal: ctl.signal },
    );
    reading.catch(() => undefined);
    await eventually(() => stagedPast(file, 100_000), 15_000, 20, 'the read did not start');
    ctl.abort();
    expect((await failure(reading)).code).toBe('TIMEOUT');
    expect(fs.existsSync(file)).toBe(false);
  });
});

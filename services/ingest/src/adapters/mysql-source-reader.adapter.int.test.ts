import fs from 'node:fs';
import { AppError } from '@quarry/errors';
import { mariadbMissing, TestMariadb } from '../../../../tests/support/mariadb';
import {
  cursorCases,
  eventually,
  failure,
  headerAlone,
  loadTyped,
  readTyped,
  refusedLogins,
  signal,
  stagedPast,
  stagingFolder,
  tableByName,
  textBound,
  unreachableHosts,
  type DatabaseSuite,
} from '../../../../tests/support/source-reader-cases';
import { readStagedCsv, stagedObjects } from '../../../../tests/support/staged-load';
import type { SourceSpec } from '../ports/source-reader.port';
import { MysqlSourceReader } from './mysql-source-reader.adapter';
import { makeHostPolicy } from './source-host-policy';

// A real MariaDB started privately in a temp folder (tests/support/mariadb.ts), never a mock; its own
// time zone is +02:00, so a reader that did not read TIMESTAMPs in UTC would show it.
describe('MysqlSourceReader on a real MariaDB', () => {
  let server: TestMariadb | undefined;
  const { staged } = stagingFolder('q-mysql-source-');
  const reader = new MysqlSourceReader();
  const spec = (over: Partial<SourceSpec> = {}): SourceSpec => ({
    kind: 'mysql',
    connection: server!.login,
    ...over,
  });
  const suite: DatabaseSuite = { reader, spec, staged };
  /** The reader's statements running now (the test user's, but for this probe's own). */
  const running = (like: string) =>
    server!.admin(async (c) => {
      const [rows] = await c.query(
        `SELECT id FROM information_schema.processlist WHERE user = 'quarry_reader' AND command = 'Query' AND info LIKE ?`,
        [like],
      );
      return (rows as Array<{ id: number }>).map((r) => r.id);
    });
  // The Sequence engine's table streams its rows as they are made.
  const BIG = "SELECT seq AS n, REPEAT('x', 100) AS pad FROM seq_1_to_3000000";

  beforeAll(async () => {
    const missing = mariadbMissing();
    if (missing) {
      console.warn(`skipped: ${missing}`);
      return;
    }
    const started = Date.now();
    server = await TestMariadb.start();
    console.log(`private MariaDB on port ${server.port} ready in ${Date.now() - started} ms`);
    await server.asUser(async (c) => {
      await c.query(`CREATE TABLE typed (
        id INT PRIMARY KEY, tiny TINYINT, flag TINYINT(1), flag_bool BOOL, small SMALLINT, med MEDIUMINT,
        big BIGINT, ubig BIGINT UNSIGNED, amount DECIMAL(38,10), ratio DOUBLE, single FLOAT, day DATE,
        at TIMESTAMP(6) NULL, wall DATETIME(6), doc JSON, note TEXT, label VARCHAR(20), bin VARBINARY(4),
        yr YEAR, bits BIT(10), t TIME) DEFAULT CHARSET utf8mb4`);
      // The session's zone is the server's (+02:00): the TIMESTAMP below is 02:05:06.123456 UTC.
      await c.query(
        `INSERT INTO typed VALUES
          (1, -5, 1, 0, 7, 8, 9007199254740993, 18446744073709551615, '12345678901234567890.0123456789', 0.1, 1.1,
           '2001-02-03', '2001-02-03 04:05:06.123456', '2001-02-03 04:05:06.5', '{"a": [1, 2.50, "x"]}', ?, 'plain',
           X'00ff', 2024, b'1000000001', '-01:02:03'),
          (2, 127, 0, 1, -32768, 0, -9223372036854775808, 0, '-0.0000000001', 1e300, -0.5,
           '1999-12-31', '1999-12-31 23:59:59', '1999-12-31 23:59:59', '[]', '', 'x', X'', 1999, b'0', '00:00:00'),
          (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL)`,
        ['He said "hi, there",\nthen left; a | b\ttab ☃'],
      );
      await c.query(`CREATE TABLE empty (id INT, name TEXT)`);
      // A collation other than the connection's: the text cursor compares in the column's own.
      await c.query(`CREATE TABLE events (id BIGINT, at DATETIME(6), name VARCHAR(50) COLLATE utf8mb4_unicode_ci)`);
      await c.query(`INSERT INTO events VALUES
        (1, '2024-01-01 00:00:00', 'a'), (2, '2024-01-02 00:00:00.25', 'b'),
        (9007199254740992, '2024-01-03 00:00:00', 'c'), (9007199254740993, '2024-01-04 10:00:00.123456', 'd'),
        (NULL, NULL, 'no cursor'), (5, '2024-01-02 12:00:00', 'it''s')`);
      await c.query('CREATE TABLE `we``ird` (v TEXT)');
      await c.query("INSERT INTO `we``ird` VALUES ('ok')");
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('maps each type exactly and writes a CSV a parser reads back value for value', async () => {
    if (!server) return;
    const { file, read } = await readTyped(suite, 'SELECT * FROM typed ORDER BY id;');
    expect(read.columns).toEqual([
      { name: 'id', dbType: 'INT', type: 'integer' },
      { name: 'tiny', dbType: 'TINYINT', type: 'integer' },
      { name: 'flag', dbType: 'TINYINT(1)', type: 'boolean' },
      { name: 'flag_bool', dbType: 'TINYINT(1)', type: 'boolean' },
      { name: 'small', dbType: 'SMALLINT', type: 'integer' },
      { name: 'med', dbType: 'MEDIUMINT', type: 'integer' },
      { name: 'big', dbType: 'BIGINT' },
      { name: 'ubig', dbType: 'BIGINT UNSIGNED' },
      { name: 'amount', dbType: 'DECIMAL(38,10)' },
      { name: 'ratio', dbType: 'DOUBLE', type: 'number' },
      { name: 'single', dbType: 'FLOAT', type: 'number' },
      { name: 'day', dbType: 'DATE', type: 'date' },
      { name: 'at', dbType: 'TIMESTAMP(6)', type: 'timestamp' },
      { name: 'wall', dbType: 'DATETIME(6)', type: 'timestamp' },
      { name: 'doc', dbType: 'JSON', type: 'string' },
      { name: 'note', dbType: 'TEXT', type: 'string' },
      { name: 'label', dbType: 'VARCHAR', type: 'string' },
      { name: 'bin', dbType: 'VARBINARY', type: 'string' },
      { name: 'yr', dbType: 'YEAR', type: 'integer' },
      { name: 'bits', dbType: 'BIT(10)' },
      { name: 't', dbType: 'TIME', type: 'string' },
    ]);
    const rows = stagedObjects(file);
    expect(rows[0]).toEqual({
      id: '1',
      tiny: '-5',
      flag: 'true',
      flag_bool: 'false',
      small: '7',
      med: '8',
      big: '9007199254740993',
      ubig: '18446744073709551615',
      amount: '12345678901234567890.0123456789',
      ratio: '0.1',
      single: '1.1',
      day: '2001-02-03',
      at: '2001-02-03T02:05:06.123456Z',
      wall: '2001-02-03T04:05:06.500000Z',
      doc: '{"a": [1, 2.50, "x"]}',
      note: 'He said "hi, there",\nthen left; a | b\ttab ☃',
      label: 'plain',
      bin: '\\x00ff',
      yr: '2024',
      bits: '513',
      t: '-01:02:03',
    });
    expect(rows[1]).toMatchObject({
      flag: 'false',
      flag_bool: 'true',
      big: '-9223372036854775808',
      amount: '-0.0000000001',
      ratio: '1e300',
      at: '1999-12-31T21:59:59.000000Z',
      wall: '1999-12-31T23:59:59.000000Z',
      doc: '[]',
      bin: '\\x',
      bits: '0',
    });
    expect(readStagedCsv(file).records[2]).toEqual(['3', ...Array(20).fill('')]);
  });

  it('stages what Quarry’s loader loads digit for digit, instant for instant', async () => {
    if (!server) return;
    const loaded = await loadTyped(suite, 'SELECT * FROM typed ORDER BY id');
    expect(loaded.types).toMatchObject({
      flag: 'boolean',
      big: 'integer',
      ubig: 'string',
      amount: 'string',
      ratio: 'number',
      day: 'date',
      at: 'date',
      wall: 'date',
      doc: 'string',
    });
    expect(loaded.rows[0]).toMatchObject({
      flag: 'true',
      big: '9007199254740993',
      ubig: '18446744073709551615',
      amount: '12345678901234567890.0123456789',
      day: '2001-02-03',
      at: '2001-02-03 02:05:06.123456',
      wall: '2001-02-03 04:05:06.5',
    });
    expect(loaded.rows[2]).toMatchObject({ big: null, amount: null, at: null, flag: null });
  });

  it('reads a table by name, quoted as an identifier (schema.table too)', async () => {
    if (!server) return;
    const missing = await tableByName(suite, { weird: 'we`ird', qualified: 'quarry_source.events' });
    expect(missing.detail).toBe("The source query failed: Table 'quarry_source.typed; DROP TABLE typed' doesn't exist");
  });

  it('reads only rows past the cursor bound, in cursor order, leaving out null cursors', async () => {
    if (!server) return;
    await cursorCases(suite, { timeBound: '2024-01-02 00:00:00.25', timeMax: '2024-01-04 10:00:00.123456' });
  });

  it('passes the bound as a parameter: quotes and SQL in it are a value, never run', async () => {
    if (!server) return;
    await textBound(suite, "b'; DROP TABLE events; -- \\");
    const file = staged();
    const bad = await failure(
      reader.read(spec({ table: 'events' }), {
        file,
        cursor: { column: 'id', after: '1; DROP TABLE events' },
        signal: signal(),
      }),
    );
    expect(bad.code).toBe('INVALID_ARGUMENT');
    expect(bad.detail).toBe('The cursor bound "1; DROP TABLE events" is not an integer, as column "id" (BIGINT) is');
    expect(fs.existsSync(file)).toBe(false);
    const count = await server.asUser(async (c) => (await c.query('SELECT count(*) AS n FROM events'))[0]);
    expect(count).toEqual([{ n: 6 }]);
  });

  it('writes a header alone for no rows', async () => {
    if (!server) return;
    await headerAlone(suite);
  });

  it('refuses a wrong password clearly, without the password', async () => {
    if (!server) return;
    await refusedLogins(suite, server, {
      scheme: 'mysql',
      refused: 'The source refused the login for user "quarry_reader": access denied (wrong user or password)',
      noDatabase: 'The source refused user "quarry_reader" the database "nope"',
    });
  });

  it('says an unreachable host is unreachable, bounds the login, and never dials a refused host', async () => {
    if (!server) return;
    await unreachableHosts(suite, server, (options) => new MysqlSourceReader(options), makeHostPolicy, staged());
  });

  it('reports a failing query with the server’s message and leaves no file', async () => {
    if (!server) return;
    const file = staged();
    const err = await failure(reader.read(spec({ query: 'SELECT nope FROM typed' }), { file, signal: signal() }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.detail).toMatch(/^The source query failed: Unknown column 'nope' in /);
    expect(fs.existsSync(file)).toBe(false);
    const twice = await failure(reader.read(spec({ query: 'SELECT 1 AS a, 2 AS a' }), { file, signal: signal() }));
    expect(twice.detail).toBe("The source query failed: Duplicate column name 'a'");
    const writes = await failure(
      reader.read(spec({ query: 'SELECT 1 AS x FROM typed FOR UPDATE' }), { file, signal: signal() }),
    );
    expect(writes.detail).toBe(
      'The source query tries to write (Cannot execute statement in a READ ONLY transaction); a source is read in a read-only transaction',
    );
    expect(fs.existsSync(file)).toBe(false);
  });

  it('rejects a read whose connection is killed mid-stream, leaving no file', async () => {
    if (!server) return;
    const file = staged();
    const reading = reader.read(spec({ query: BIG }), { file, signal: signal() });
    reading.catch(() => undefined);
    await eventually(() => stagedPast(file, 100_000));
    const [id] = await running('%seq_1_to_3000000%');
    expect(id).toBeDefined();
    await server.admin((c) => c.query(`KILL CONNECTION ${Number(id)}`));
    const err = await failure(reading);
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.detail).toMatch(/^The source closed the connection after \d+ rows: .+; nothing was staged$/);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('stops on an aborted signal: kills the statement, rejects, leaves no file', async () => {
    if (!server) return;
    const file = staged();
    const ctl = new AbortController();
    const reading = reader.read(spec({ query: BIG }), { file, signal: ctl.signal });
    reading.catch(() => undefined);
    await eventually(() => stagedPast(file, 100_000));
    ctl.abort();
    expect((await failure(reading)).code).toBe('TIMEOUT');
    expect(fs.existsSync(file)).toBe(false);
    await eventually(async () => (await running('%seq_1_to_3000000%')).length === 0);
    // A statement that has sent no row yet is killed on the server, not left running.
    const sleeping = new AbortController();
    const started = Date.now();
    const slow = reader.read(spec({ query: 'SELECT SLEEP(60) AS s' }), { file, signal: sleeping.signal });
    slow.catch(() => undefined);
    await eventually(async () => (await running('%SLEEP(60)%')).length > 0);
    sleeping.abort(AppError.timeout('deadline'));
    expect((await failure(slow)).detail).toBe('deadline');
    expect(Date.now() - started).toBeLessThan(20_000);
    await eventually(async () => (await running('%SLEEP(60)%')).length === 0);
    expect(fs.existsSync(file)).toBe(false);
  });
});

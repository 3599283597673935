import fs from 'node:fs';
import { AppError } from '@quarry/errors';
import { postgresMissing, TestPostgres } from '../../../../tests/support/postgres';
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
import { PostgresSourceReader } from './postgres-source-reader.adapter';
import { makeHostPolicy } from './source-host-policy';

// A real PostgreSQL started privately in a temp folder (tests/support/postgres.ts), never a mock; its
// own TimeZone is Europe/Paris, so a reader that did not set UTC would show it.
describe('PostgresSourceReader on a real PostgreSQL', () => {
  let server: TestPostgres | undefined;
  const { staged } = stagingFolder('q-pg-source-');
  const reader = new PostgresSourceReader();
  const spec = (over: Partial<SourceSpec> = {}): SourceSpec => ({
    kind: 'postgres',
    connection: server!.login,
    ...over,
  });
  const suite: DatabaseSuite = { reader, spec, staged };
  const active = () =>
    server!.admin(async (c) =>
      Number(
        (
          await c.query(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'quarry-ingest' AND state = 'active'`,
          )
        ).rows[0].n,
      ),
    );
  // A set-returning function in the select list streams its rows (in FROM it would be materialized first).
  const BIG = "SELECT generate_series(1, 3000000) AS n, repeat('x', 100) AS pad";

  beforeAll(async () => {
    const missing = postgresMissing();
    if (missing) {
      console.warn(`skipped: ${missing}`);
      return;
    }
    const started = Date.now();
    server = await TestPostgres.start();
    console.log(`private PostgreSQL on port ${server.port} ready in ${Date.now() - started} ms`);
    await server.asUser(async (c) => {
      await c.query(`CREATE DOMAIN posint AS int4 CHECK (VALUE > 0)`);
      await c.query(`CREATE TABLE typed (
        id posint PRIMARY KEY, small int2, big int8, amount numeric(38,10), ratio float8, single float4,
        flag bool, day date, at timestamptz, wall timestamp, doc jsonb, raw_json json, note text,
        label varchar(20), uid uuid, price money, bytes bytea)`);
      await c.query(
        `INSERT INTO typed VALUES
          (1, 7, 9007199254740993, '12345678901234567890.0123456789', 0.1, 1.1, true, '2001-02-03',
           '2001-02-03 04:05:06.123456+02', '2001-02-03 04:05:06.5', '{"a": [1, 2.50, "x"]}', '{"b":  1 }',
           $1, 'plain', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 12.34, '\\x00ff'),
          (2, -32768, -9223372036854775808, '-0.0000000001', 1e300, -0.5, false, '1999-12-31',
           '1999-12-31 23:59:59+00', '1999-12-31 23:59:59', '[]', 'null', '', 'x', NULL, -1, ''),
          (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
        ['He said "hi, there",\nthen left; a | b\ttab'],
      );
      await c.query(`CREATE TABLE empty (id int4, name text)`);
      await c.query(`CREATE TABLE events (id int8, at timestamptz, name text)`);
      await c.query(`INSERT INTO events VALUES
        (1, '2024-01-01 00:00:00+00', 'a'), (2, '2024-01-02 00:00:00.25+00', 'b'),
        (9007199254740992, '2024-01-03 00:00:00+00', 'c'), (9007199254740993, '2024-01-04 10:00:00.123456+00', 'd'),
        (NULL, NULL, 'no cursor'), (5, '2024-01-02 12:00:00+00', E'it''s')`);
      await c.query(`CREATE SEQUENCE quarry_seq`);
      await c.query(`CREATE TABLE "we""ird" (v text)`);
      await c.query(`INSERT INTO "we""ird" VALUES ('ok')`);
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('maps each type exactly and writes a CSV a parser reads back value for value', async () => {
    if (!server) return;
    const { file, read } = await readTyped(suite, 'SELECT * FROM typed ORDER BY id;');
    expect(read.cursorMax).toBeUndefined();
    expect(read.columns).toEqual([
      // A domain is typed as its base type (PostgreSQL describes the column so).
      { name: 'id', dbType: 'integer', type: 'integer' },
      { name: 'small', dbType: 'smallint', type: 'integer' },
      { name: 'big', dbType: 'bigint' },
      { name: 'amount', dbType: 'numeric(38,10)' },
      { name: 'ratio', dbType: 'double precision', type: 'number' },
      { name: 'single', dbType: 'real', type: 'number' },
      { name: 'flag', dbType: 'boolean', type: 'boolean' },
      { name: 'day', dbType: 'date', type: 'date' },
      { name: 'at', dbType: 'timestamp with time zone', type: 'timestamp' },
      { name: 'wall', dbType: 'timestamp without time zone', type: 'timestamp' },
      { name: 'doc', dbType: 'jsonb', type: 'string' },
      { name: 'raw_json', dbType: 'json', type: 'string' },
      { name: 'note', dbType: 'text', type: 'string' },
      { name: 'label', dbType: 'character varying(20)', type: 'string' },
      { name: 'uid', dbType: 'uuid', type: 'string' },
      { name: 'price', dbType: 'money' },
      { name: 'bytes', dbType: 'bytea', type: 'string' },
    ]);
    const rows = stagedObjects(file);
    expect(rows[0]).toEqual({
      id: '1',
      small: '7',
      big: '9007199254740993',
      amount: '12345678901234567890.0123456789',
      ratio: '0.1',
      single: '1.1',
      flag: 'true',
      day: '2001-02-03',
      at: '2001-02-03 02:05:06.123456+00',
      wall: '2001-02-03 04:05:06.5+00',
      doc: '{"a": [1, 2.50, "x"]}',
      raw_json: '{"b":  1 }',
      note: 'He said "hi, there",\nthen left; a | b\ttab',
      label: 'plain',
      uid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      price: '12.34',
      bytes: '\\x00ff',
    });
    expect(rows[1]).toMatchObject({
      small: '-32768',
      big: '-9223372036854775808',
      amount: '-0.0000000001',
      ratio: '1e+300',
      flag: 'false',
      at: '1999-12-31 23:59:59+00',
      doc: '[]',
      raw_json: 'null',
      price: '-1.00',
    });
    // NULL is an empty field.
    const { records } = readStagedCsv(file);
    expect(records[2]).toEqual(['3', ...Array(16).fill('')]);
    // The header's names are quoted, so none is taken for a delimiter.
    expect(fs.readFileSync(file, 'utf8').split('\n')[0]).toBe(
      '"id","small","big","amount","ratio","single","flag","day","at","wall","doc","raw_json","note","label","uid","price","bytes"',
    );
  });

  it('stages what Quarry’s loader loads digit for digit, instant for instant', async () => {
    if (!server) return;
    const loaded = await loadTyped(suite, 'SELECT * FROM typed ORDER BY id');
    expect(loaded.types).toMatchObject({
      id: 'integer',
      big: 'integer',
      amount: 'string',
      ratio: 'number',
      flag: 'boolean',
      day: 'date',
      at: 'date',
      wall: 'date',
      doc: 'string',
    });
    expect(loaded.rows[0]).toMatchObject({
      big: '9007199254740993',
      amount: '12345678901234567890.0123456789',
      flag: 'true',
      day: '2001-02-03',
      at: '2001-02-03 02:05:06.123456',
      wall: '2001-02-03 04:05:06.5',
      note: 'He said "hi, there",\nthen left; a | b\ttab',
    });
    expect(loaded.rows[1].big).toBe('-9223372036854775808');
    expect(loaded.rows[2]).toMatchObject({ big: null, amount: null, at: null, flag: null });
  });

  it('reads a table by name, quoted as an identifier (schema.table too)', async () => {
    if (!server) return;
    const missing = await tableByName(suite, { weird: 'we"ird', qualified: 'public.events' });
    expect(missing.detail).toMatch(/relation "typed; DROP TABLE typed" does not exist/);
  });

  it('reads only rows past the cursor bound, in cursor order, leaving out null cursors', async () => {
    if (!server) return;
    await cursorCases(suite, { timeBound: '2024-01-02 00:00:00.25+00', timeMax: '2024-01-04 10:00:00.123456+00' });
  });

  it('passes the bound as a parameter: quotes and SQL in it are a value, never run', async () => {
    if (!server) return;
    await textBound(suite, "b'; DROP TABLE events; --");
    const file = staged();
    const bad = await failure(
      reader.read(spec({ table: 'events' }), {
        file,
        cursor: { column: 'id', after: '1; DROP TABLE events' },
        signal: signal(),
      }),
    );
    expect(bad.code).toBe('INVALID_ARGUMENT');
    expect(bad.detail).toMatch(/The source query failed: invalid input syntax for type bigint/);
    expect(fs.existsSync(file)).toBe(false);
    const count = await server.asUser(async (c) => (await c.query('SELECT count(*) AS n FROM events')).rows[0].n);
    expect(count).toBe('6');
    const unknown = await failure(
      reader.read(spec({ table: 'events' }), { file: staged(), cursor: { column: 'nope' }, signal: signal() }),
    );
    expect(unknown.detail).toBe(
      'The cursor column "nope" is not among the columns the source returns ("id", "at", "name")',
    );
  });

  it('writes a header alone for no rows', async () => {
    if (!server) return;
    await headerAlone(suite);
  });

  it('refuses a wrong password clearly, without the password', async () => {
    if (!server) return;
    await refusedLogins(suite, server, {
      scheme: 'postgres',
      refused: 'The source refused the login for user "quarry_reader": password authentication failed',
      noDatabase: `The source at 127.0.0.1:${server.port} has no database "nope"`,
    });
  });

  it('says an unreachable host is unreachable, and a refused host is never dialled', async () => {
    if (!server) return;
    const file = staged();
    const tls = await failure(
      reader.read(spec({ connection: { ...server.login, ssl: true }, table: 'events' }), { file, signal: signal() }),
    );
    expect(tls.detail).toBe(`The source at 127.0.0.1:${server.port} does not accept TLS (connection.ssl is true)`);
    expect(fs.existsSync(file)).toBe(false);
    await unreachableHosts(suite, server, (options) => new PostgresSourceReader(options), makeHostPolicy, file);
  });

  it('reports a failing query with PostgreSQL’s message and leaves no file', async () => {
    if (!server) return;
    const file = staged();
    const err = await failure(reader.read(spec({ query: 'SELECT nope FROM typed' }), { file, signal: signal() }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.detail).toBe('The source query failed: column "nope" does not exist');
    expect(fs.existsSync(file)).toBe(false);
    // Divides by zero only on the third row: the failure comes mid-read.
    const late = await failure(
      reader.read(spec({ query: 'SELECT 1 / (3 - g) AS x FROM generate_series(1, 5) g' }), { file, signal: signal() }),
    );
    expect(late.detail).toBe('The source query failed: division by zero');
    expect(fs.existsSync(file)).toBe(false);
    const writes = await failure(
      reader.read(spec({ query: "SELECT nextval('quarry_seq')" }), { file, signal: signal() }),
    );
    expect(writes.detail).toBe(
      'The source query tries to write (cannot execute nextval() in a read-only transaction); a source is read in a read-only transaction',
    );
    // A query that closes the subquery, commits the read-only transaction and writes: refused whole, never run.
    const escape = await failure(
      reader.read(
        spec({ query: 'SELECT 1 AS a) q; COMMIT; CREATE TABLE pwned (x int); SELECT * FROM (SELECT 1 AS a' }),
        { file, signal: signal() },
      ),
    );
    expect(escape.code).toBe('INVALID_ARGUMENT');
    expect(escape.detail).toMatch(
      /^The source query failed: cannot insert multiple commands into a prepared statement/,
    );
    expect(fs.existsSync(file)).toBe(false);
    const made = await server.asUser(async (c) => (await c.query("SELECT to_regclass('pwned') AS t")).rows[0].t);
    expect(made).toBeNull();
    const twice = await failure(reader.read(spec({ query: 'SELECT 1 AS a, 2 AS a' }), { file, signal: signal() }));
    expect(twice.detail).toBe('The source query returns two columns named "a": give each column its own name');
  });

  it('rejects a read whose connection is terminated mid-stream, leaving no file', async () => {
    if (!server) return;
    const file = staged();
    const reading = reader.read(spec({ query: BIG }), { file, signal: signal() });
    reading.catch(() => undefined);
    await eventually(() => stagedPast(file, 100_000));
    await server.admin((c) =>
      c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quarry-ingest'`),
    );
    const err = await failure(reading);
    expect(err.code).toBe('UNAVAILABLE');
    // The server's last word when it got it out: in the middle of a COPY its send buffer is full, and it
    // may hang up without one.
    expect(err.detail).toMatch(
      /^The source closed the connection after \d+ rows: (terminating connection due to administrator command|Connection terminated unexpectedly); nothing was staged$/,
    );
    expect(fs.existsSync(file)).toBe(false);
  });

  it('stops on an aborted signal: cancels the statement, rejects, leaves no file', async () => {
    if (!server) return;
    const file = staged();
    const ctl = new AbortController();
    const reading = reader.read(spec({ query: BIG }), { file, signal: ctl.signal });
    reading.catch(() => undefined);
    await eventually(() => stagedPast(file, 100_000));
    ctl.abort();
    const err = await failure(reading);
    expect(err.code).toBe('TIMEOUT');
    expect(fs.existsSync(file)).toBe(false);
    // A statement that has sent no row yet is cancelled on the server, not left running.
    const sleeping = new AbortController();
    const started = Date.now();
    const slow = reader.read(spec({ query: 'SELECT pg_sleep(60) AS s' }), { file, signal: sleeping.signal });
    slow.catch(() => undefined);
    await eventually(async () => (await active()) > 0);
    sleeping.abort(AppError.timeout('deadline'));
    expect((await failure(slow)).detail).toBe('deadline');
    expect(Date.now() - started).toBeLessThan(20_000);
    await eventually(async () => (await active()) === 0);
    expect(fs.existsSync(file)).toBe(false);
  });
});

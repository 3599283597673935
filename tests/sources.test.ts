import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describeIf } from '@quarry/testkit';
import { createIdentity, type Identity } from './support/identities';
import { postgresMissing, TestPostgres } from './support/postgres';
import { mariadbMissing, TestMariadb } from './support/mariadb';
import { startStackWithData, type Stack } from './support/stack';

const WRITE = 'query:execute,indexes:read,indexes:write';
/** Runs end on their own; this only keeps a broken run from hanging the suite. */
const RUN_GUARD_MS = 120_000;

interface Run {
  runId: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  trigger: 'manual' | 'schedule';
  rowsRead: number;
  loaded: number;
  rejected: number;
  version?: number;
  cursorAfter?: string;
  cursorMax?: string;
  error?: string;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = RUN_GUARD_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const missing = postgresMissing();

/*
 * Sources end to end: SOURCES.* through JSON-RPC on the real server, its ingest service reading a private
 * PostgreSQL 15 (and MariaDB, SQLite, an HTTP server) the test starts, each run a BullMQ job on the
 * server's Redis, loaded by the loader of `quarry index load`. After every failure the previous version
 * keeps serving.
 */
describeIf(!missing, missing ?? '', 'sources: SOURCES.* on real databases', () => {
  let stack: Stack;
  let pg: TestPostgres;
  let tmp: string;
  let ann: Identity; // creates sources
  let bob: Identity; // another writer
  let admin: Identity;
  let reader: Identity; // no indexes:write

  const call = <T>(who: Identity, method: string, params: unknown) => stack.call<T>(who, method, params);
  const data = <T>(who: Identity, method: string, params: unknown) => stack.data<T>(who, method, params);
  const pgSource = (over: Record<string, unknown> = {}) => ({
    name: 'orders',
    index: 'orders',
    kind: 'postgres',
    connection: {
      host: pg.host,
      port: pg.port,
      database: pg.database,
      user: pg.user,
      password: pg.password,
    },
    table: 'orders',
    ...over,
  });

  async function runToEnd(who: Identity, sourceId: string): Promise<Run> {
    const { runId } = await data<{ runId: string }>(who, 'SOURCES.RUN', { sourceId });
    return until(`run ${runId} to end`, async () => {
      const { runs } = await data<{ runs: Run[] }>(who, 'SOURCES.RUNS', { sourceId });
      const run = runs.find((r) => r.runId === runId);
      return run && (run.state === 'done' || run.state === 'failed') ? run : undefined;
    });
  }

  async function search(who: Identity, index: string, query = '*', sort = 'id') {
    return data<{ total: number; records: Array<Record<string, unknown>> }>(who, 'QUERIES.EXECUTE', {
      index,
      query,
      pageSize: 100,
      sort: [{ field: sort, direction: 'asc' }],
    });
  }

  /** The answer as the server wrote it: a JSON client's numbers lose digits past 2^53, the wire does not. */
  async function rawSearch(who: Identity, index: string): Promise<string> {
    const res = await fetch(`${stack.quarry.baseUrl}/api/v1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${who.token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'QUERIES.EXECUTE',
        params: { index, query: '*', sort: [{ field: 'id', direction: 'asc' }] },
      }),
    });
    return res.text();
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-sources-'));
    pg = await TestPostgres.start();
    await pg.asUser(async (c) => {
      await c.query(`CREATE TABLE orders (
        id integer PRIMARY KEY,
        customer text NOT NULL,
        amount numeric(20,6),
        big bigint,
        placed timestamptz,
        due date,
        extra jsonb)`);
      await c.query(`INSERT INTO orders VALUES
        (1, 'ann', 12.345678, 9007199254740993, '2024-03-31 01:30:00+01', '2024-04-01', '{"a": 1}'),
        (2, 'bob', 0.000001, -42, '2024-10-27 02:30:00+02', '2024-10-27', null),
        (3, 'cat', 99999999999999.999999, null, null, null, '[1,2]')`);
      await c.query('CREATE TABLE empty_table (id integer)');
      await c.query('CREATE TABLE events (id integer, seen timestamptz, what text)');
      await c.query(`INSERT INTO events VALUES (1, '2024-01-01 00:00:00Z', 'a'), (2, '2024-01-02 00:00:00Z', 'b'),
        (3, null, 'never read: its cursor is null')`);
    });
    stack = await startStackWithData({
      env: {
        // Loopback named exactly (so allowed), any port: the test's own servers; nothing else.
        QUARRY_SOURCE_ALLOW: '127.0.0.1:*',
        QUARRY_SOURCE_FILE_DIRS: tmp,
        // Cron refreshes every second, so that a test sees one without waiting minutes.
        QUARRY_SCHEDULE_MIN_INTERVAL_S: '1',
      },
    });
    ann = await createIdentity(stack.dataDir, 'ann', { indexes: 'movies', scopes: WRITE });
    bob = await createIdentity(stack.dataDir, 'bob', { indexes: '*', scopes: WRITE });
    admin = await createIdentity(stack.dataDir, 'root', { admin: true, scopes: WRITE });
    reader = await createIdentity(stack.dataDir, 'rita', { indexes: '*', scopes: 'query:execute,indexes:read' });
  }, 600_000);

  afterAll(async () => {
    if (process.env.DEBUG_SOURCES) fs.writeFileSync('/tmp/sources-logs.txt', stack.quarry.logs().join('\n'));
    await stack?.quarry.stop();
    await pg?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('loads a PostgreSQL table with its types kept exactly, and never shows, logs or audits the password', async () => {
    const { sourceId } = await data<{ sourceId: string }>(ann, 'SOURCES.CREATE', pgSource());
    expect(sourceId).toMatch(/^[0-9a-f]{32}$/);
    const run = await runToEnd(ann, sourceId);
    expect(run).toMatchObject({ state: 'done', trigger: 'manual', rowsRead: 3, loaded: 3, rejected: 0, version: 1 });
    const { records, total } = await search(ann, 'orders');
    expect(total).toBe(3);
    // numeric keeps its digits, bigint past 2^53 stays exact, timestamptz is an instant, date a calendar date.
    expect(records.map((r) => String(r.amount))).toEqual(['12.345678', '0.000001', '99999999999999.999999']);
    expect(await rawSearch(ann, 'orders')).toContain('"big":9007199254740993,');
    expect(records[0].placed).toBe('2024-03-31T00:30:00');
    expect(records[1].placed).toBe('2024-10-27T00:30:00');
    expect(String(records[0].due).slice(0, 10)).toBe('2024-04-01');
    expect(records[0].extra).toBe('{"a": 1}');
    // Ann's grants name movies only: she reads orders because her source created it.
    const { sources } = await data<{ sources: Array<Record<string, unknown>> }>(ann, 'SOURCES.FIND', {});
    expect(sources).toHaveLength(1);
    expect(sources[0]).toMatchObject({
      sourceId,
      name: 'orders',
      index: 'orders',
      kind: 'postgres',
      owner: 'ann',
      connection: { host: pg.host, port: pg.port, database: pg.database, user: pg.user, hasPassword: true },
      refresh: { timeZone: 'UTC', mode: 'replace' },
      lastRun: { runId: run.runId, state: 'done' },
    });
    expect(JSON.stringify(sources)).not.toContain(pg.password);
    expect(stack.quarry.logs().join('\n')).not.toContain(pg.password);
    const audit = await stack.cli(['audit', '--user', 'ann']);
    expect(audit.stdout).toMatch(/SOURCES\.CREATE/);
    expect(audit.stdout + audit.stderr).not.toContain(pg.password);
    // Nor is it kept in the clear: the Redis file holds it encrypted.
    const redisDir = path.join(stack.dataDir, 'redis');
    const kept = fs
      .readdirSync(redisDir, { recursive: true })
      .map(String)
      .filter((f) => fs.statSync(path.join(redisDir, f)).isFile())
      .map((f) => fs.readFileSync(path.join(redisDir, f)).toString('latin1'))
      .join('');
    expect(kept).toContain(sourceId);
    expect(kept).not.toContain(pg.password);
  });

  it('refuses what it cannot run at once, naming the problem: the host, the shape, the cron, the rights', async () => {
    const refused = async (who: Identity, params: unknown, method = 'SOURCES.CREATE') => {
      const r = await call(who, method, params);
      return { code: r.error?.code, detail: r.error?.data?.detail };
    };
    // A host QUARRY_SOURCE_ALLOW does not name, and a private address no pattern names exactly.
    expect(
      await refused(ann, pgSource({ name: 'x', connection: { ...pgSource().connection, host: 'db.example.com' } })),
    ).toEqual({
      code: 400,
      detail: `connection: db.example.com:${pg.port} does not match QUARRY_SOURCE_ALLOW`,
    });
    expect(
      await refused(ann, pgSource({ name: 'x', connection: { url: `postgres://u:secret@10.1.2.3:${pg.port}/db` } })),
    ).toEqual({ code: 400, detail: `connection: 10.1.2.3:${pg.port} does not match QUARRY_SOURCE_ALLOW` });
    expect(await refused(ann, pgSource({ name: 'x', query: 'SELECT 1' }))).toMatchObject({ code: 400 });
    expect((await refused(ann, pgSource({ name: 'x', query: 'SELECT 1' }))).detail).toMatch(/query or a table/);
    expect(await refused(ann, pgSource({ name: 'x', refresh: { mode: 'upsert' } }))).toMatchObject({ code: 400 });
    expect((await refused(ann, pgSource({ name: 'x', refresh: { mode: 'upsert' } }))).detail).toMatch(
      /refresh\.key is required with mode "upsert"/,
    );
    expect(
      (await refused(ann, pgSource({ name: 'x', refresh: { mode: 'replace', cron: 'every day' } }))).detail,
    ).toMatch(/^refresh\.cron must have 5 fields/);
    // Blank text where a name, a query or a column is meant says so, instead of failing at each run.
    for (const [params, detail] of [
      [pgSource({ name: 'x', table: ' ' }), 'table must not be blank'],
      [pgSource({ name: 'x', table: undefined, query: '' }), 'query must not be blank'],
      [pgSource({ name: 'x', refresh: { mode: 'append', cursor: '' } }), 'refresh.cursor must not be blank'],
      [pgSource({ name: 'x', refresh: { mode: 'upsert', key: '\t' } }), 'refresh.key must not be blank'],
      [
        pgSource({ name: 'x', connection: { ...pgSource().connection, host: '' } }),
        'connection.host must not be blank',
      ],
    ] as const)
      expect(await refused(ann, params)).toEqual({ code: 400, detail });
    expect(
      (await refused(ann, pgSource({ name: 'x', kind: 'sqlite', table: 't', connection: { url: '/etc/passwd' } })))
        .detail,
    ).toMatch(/not in a folder QUARRY_SOURCE_FILE_DIRS names/);
    // A path outside the folders is refused before it is looked at: no answer tells a file there exists.
    for (const url of ['/etc/no-such-file.db', '/root/.bash_history', '/tmp/../etc/shadow'])
      expect(
        (await refused(ann, pgSource({ name: 'x', kind: 'sqlite', table: 't', connection: { url } }))).detail,
      ).toMatch(/^connection: \/\S+ is not in a folder QUARRY_SOURCE_FILE_DIRS names$/);
    // The same name twice; an index another user owns; no indexes:write.
    expect(await refused(ann, pgSource())).toEqual({ code: 409, detail: 'You already have a source named "orders"' });
    expect(await refused(bob, pgSource())).toEqual({
      code: 403,
      detail: 'Index "orders" may be written only by its owner or an admin',
    });
    expect(await refused(reader, pgSource({ name: 'r', index: 'rita' }))).toMatchObject({ code: 403 });
    expect(await refused(reader, {}, 'SOURCES.FIND')).toMatchObject({ code: 403 });
  });

  it('shows another user’s source to no one but an admin: FIND, RUN, RUNS, UPDATE and DELETE answer 404', async () => {
    const [mine] = (await data<{ sources: Array<{ sourceId: string }> }>(ann, 'SOURCES.FIND', {})).sources;
    expect((await data<{ sources: unknown[] }>(bob, 'SOURCES.FIND', {})).sources).toEqual([]);
    for (const [method, extra] of [
      ['SOURCES.FIND', {}],
      ['SOURCES.RUN', {}],
      ['SOURCES.RUNS', {}],
      ['SOURCES.UPDATE', { name: 'mine now' }],
      ['SOURCES.DELETE', {}],
    ] as const) {
      const r = await call(bob, method, { sourceId: mine.sourceId, ...extra });
      expect([method, r.error?.code, r.error?.data?.detail]).toEqual([
        method,
        404,
        `Source "${mine.sourceId}" not found`,
      ]);
    }
    // An unknown id reads the same; a malformed one is a 400 before any lookup.
    expect((await call(bob, 'SOURCES.RUNS', { sourceId: 'f'.repeat(32) })).error?.code).toBe(404);
    expect((await call(bob, 'SOURCES.RUNS', { sourceId: '../../etc' })).error?.data?.detail).toBe(
      'sourceId is not a source id',
    );
    const seen = await data<{ sources: Array<{ sourceId: string; owner: string }> }>(admin, 'SOURCES.FIND', {});
    expect(seen.sources.map((s) => [s.sourceId, s.owner])).toContainEqual([mine.sourceId, 'ann']);
  });

  it('fails a run on a wrong password, a failing query or no rows, saying why; the previous version keeps serving', async () => {
    const [mine] = (await data<{ sources: Array<{ sourceId: string }> }>(ann, 'SOURCES.FIND', {})).sources;
    const before = await search(ann, 'orders');
    const failed = async (change: Record<string, unknown>) => {
      await data(ann, 'SOURCES.UPDATE', { sourceId: mine.sourceId, ...change });
      const run = await runToEnd(ann, mine.sourceId);
      expect(run.state).toBe('failed');
      expect(await search(ann, 'orders')).toEqual(before);
      return run.error;
    };
    expect(await failed({ connection: { ...pgSource().connection, password: 'wrong' } })).toMatch(
      /password authentication failed|password/i,
    );
    // The password given back: the same host, user and database keep a password left out afterwards.
    await data(ann, 'SOURCES.UPDATE', { sourceId: mine.sourceId, connection: pgSource().connection });
    expect(await failed({ query: 'SELECT no_such_column FROM orders' })).toMatch(/no_such_column/);
    expect(await failed({ query: 'SELECT * FROM empty_table' })).toBe(
      'The source returned no rows: nothing was published (a replace with none would empty the index); the previous version keeps serving',
    );
    const { host, port, database, user } = pgSource().connection;
    await data(ann, 'SOURCES.UPDATE', {
      sourceId: mine.sourceId,
      table: 'orders',
      connection: { host, port, database, user },
    });
    const again = await runToEnd(ann, mine.sourceId);
    expect(again).toMatchObject({ state: 'done', rowsRead: 3, version: 2 });
  });

  it('appends only the rows past the last run’s cursor, bound as a parameter; rows with a null cursor never', async () => {
    const { sourceId } = await data<{ sourceId: string }>(
      ann,
      'SOURCES.CREATE',
      pgSource({ name: 'events', index: 'events', table: 'events', refresh: { mode: 'append', cursor: 'seen' } }),
    );
    const first = await runToEnd(ann, sourceId);
    expect(first).toMatchObject({ state: 'done', rowsRead: 2, loaded: 2 });
    expect(first.cursorAfter).toBeUndefined();
    expect(first.cursorMax).toMatch(/^2024-01-02/);
    await pg.asUser((c) =>
      c.query(
        `INSERT INTO events VALUES (4, '2024-01-03 00:00:00Z', 'new'), (5, '2024-01-01 12:00:00Z', 'late, older')`,
      ),
    );
    const second = await runToEnd(ann, sourceId);
    expect(second).toMatchObject({ state: 'done', rowsRead: 1, loaded: 1, version: 2 });
    expect(second.cursorAfter).toBe(first.cursorMax);
    expect((await search(ann, 'events')).records.map((r) => r.id)).toEqual([1, 2, 4]);
    // Nothing new: the run is done, reading none, and publishes nothing.
    const third = await runToEnd(ann, sourceId);
    expect(third).toMatchObject({ state: 'done', rowsRead: 0 });
    expect(third.version).toBeUndefined();
    // A column whose type changes between runs fails the run, naming it; the index stays as it was.
    await pg.asUser(async (c) => {
      await c.query('ALTER TABLE events ALTER COLUMN id TYPE text');
      await c.query(`INSERT INTO events VALUES ('six', '2024-02-01 00:00:00Z', 'text id')`);
    });
    const changed = await runToEnd(ann, sourceId);
    expect(changed.state).toBe('failed');
    expect(changed.error).toMatch(/id/);
    expect((await search(ann, 'events')).records.map((r) => r.id)).toEqual([1, 2, 4]);
  });

  it('upserts by key, and refuses a key repeated among the rows read', async () => {
    await pg.asUser(async (c) => {
      await c.query('CREATE TABLE prices (sku text, price numeric(10,2))');
      await c.query(`INSERT INTO prices VALUES ('a', 1.00), ('b', 2.00)`);
    });
    const { sourceId } = await data<{ sourceId: string }>(
      ann,
      'SOURCES.CREATE',
      pgSource({ name: 'prices', index: 'prices', table: 'prices', refresh: { mode: 'upsert', key: 'sku' } }),
    );
    expect(await runToEnd(ann, sourceId)).toMatchObject({ state: 'done', loaded: 2 });
    await pg.asUser((c) =>
      c.query(`UPDATE prices SET price = 5.50 WHERE sku = 'b'; INSERT INTO prices VALUES ('c', 3.00)`),
    );
    expect(await runToEnd(ann, sourceId)).toMatchObject({ state: 'done', loaded: 3 });
    const rows = (await search(ann, 'prices', '*', 'sku')).records.map((r) => [r.sku, String(r.price)]);
    expect(rows).toEqual([
      ['a', '1'],
      ['b', '5.5'],
      ['c', '3'],
    ]);
    await pg.asUser((c) => c.query(`INSERT INTO prices VALUES ('a', 9.00)`));
    const repeated = await runToEnd(ann, sourceId);
    expect(repeated.state).toBe('failed');
    expect(repeated.error).toMatch(/"a"|repeat|key/i);
    expect((await search(ann, 'prices', '*', 'sku')).records.map((r) => [r.sku, String(r.price)])).toEqual(rows);
  });

  it('runs one run of a source at a time, and a run of a deleted source stops and publishes nothing', async () => {
    const { sourceId } = await data<{ sourceId: string }>(
      ann,
      'SOURCES.CREATE',
      pgSource({ name: 'slow', index: 'slow', table: undefined, query: 'SELECT id, pg_sleep(600) AS nap FROM orders' }),
    );
    const { runId } = await data<{ runId: string }>(ann, 'SOURCES.RUN', { sourceId });
    const twice = await call(ann, 'SOURCES.RUN', { sourceId });
    expect(twice.error?.code).toBe(409);
    expect(twice.error?.data?.detail).toContain(runId);
    // The query is running on the database: then the source is deleted.
    const busy = () =>
      pg.admin(
        async (c) =>
          (
            await c.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()`,
            )
          ).rows[0].n as number,
      );
    await until('the query to run on PostgreSQL', async () => ((await busy()) > 0 ? true : undefined));
    expect((await data<{ deleted: boolean }>(ann, 'SOURCES.DELETE', { sourceId })).deleted).toBe(true);
    // The statement is cancelled on the server, and no index was made.
    await until('the query to be cancelled', async () => ((await busy()) === 0 ? true : undefined));
    expect((await call(ann, 'QUERIES.EXECUTE', { index: 'slow', query: '*' })).error?.code).toBe(404);
    expect((await call(ann, 'SOURCES.RUNS', { sourceId })).error?.code).toBe(404);
  });

  it('refreshes on its cron in its time zone, and stops when the refresh is taken away', async () => {
    const { sourceId } = await data<{ sourceId: string }>(
      ann,
      'SOURCES.CREATE',
      pgSource({
        name: 'cron',
        index: 'cron',
        refresh: { mode: 'replace', cron: '* * * * * *', timeZone: 'Asia/Kolkata' },
      }),
    );
    const found = (await data<{ sources: Array<{ nextRunAt?: string }> }>(ann, 'SOURCES.FIND', { sourceId }))
      .sources[0];
    expect(found.nextRunAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const scheduled = await until('a scheduled run to end', async () => {
      const { runs } = await data<{ runs: Run[] }>(ann, 'SOURCES.RUNS', { sourceId });
      return runs.find((r) => r.trigger === 'schedule' && r.state === 'done');
    });
    expect(scheduled.rowsRead).toBe(3);
    const updated = await data<{ nextRunAt?: string; refresh: unknown }>(ann, 'SOURCES.UPDATE', {
      sourceId,
      refresh: null,
    });
    expect(updated.nextRunAt).toBeUndefined();
    expect(updated.refresh).toEqual({ timeZone: 'UTC', mode: 'replace' });
    // A run that had started when the cron was removed may still end; after it, none starts.
    const settled = await until('the runs to settle', async () => {
      const { runs } = await data<{ runs: Run[] }>(ann, 'SOURCES.RUNS', { sourceId });
      return runs.every((r) => r.state === 'done' || r.state === 'failed') ? runs.length : undefined;
    });
    // Waits for a cron tick that must not come: a run queued by the next second's job would show within it.
    const { runId } = await data<{ runId: string }>(ann, 'SOURCES.RUN', { sourceId });
    await until('the manual run', async () => {
      const { runs } = await data<{ runs: Run[] }>(ann, 'SOURCES.RUNS', { sourceId });
      return runs.find((r) => r.runId === runId && r.state === 'done');
    });
    const { runs } = await data<{ runs: Run[] }>(ann, 'SOURCES.RUNS', { sourceId });
    expect(runs.length).toBe(settled + 1);
    await data(ann, 'SOURCES.DELETE', { sourceId });
  });

  it('runs as its creator now: a revoked token fails its runs, saying why, until its owner changes it with another', async () => {
    const carl = await createIdentity(stack.dataDir, 'carl', { indexes: '*', scopes: WRITE });
    const { sourceId } = await data<{ sourceId: string }>(
      carl,
      'SOURCES.CREATE',
      pgSource({ name: 'c', index: 'carl' }),
    );
    expect(await runToEnd(carl, sourceId)).toMatchObject({ state: 'done' });
    const other = await createIdentity(stack.dataDir, 'carl', { indexes: '*', scopes: WRITE });
    expect((await stack.cli(['token', 'revoke', carl.tokenId])).code).toBe(0);
    const { runId } = await data<{ runId: string }>(other, 'SOURCES.RUN', { sourceId });
    const run = await until('the run', async () => {
      const { runs } = await data<{ runs: Run[] }>(other, 'SOURCES.RUNS', { sourceId });
      const r = runs.find((x) => x.runId === runId);
      return r && r.state !== 'queued' && r.state !== 'running' ? r : undefined;
    });
    expect(run).toMatchObject({
      state: 'failed',
      error:
        'The source runs with the rights of the token that created or last changed it: that token was revoked (its owner changing it with another token moves it there)',
    });
    // Its owner's change, with the other token, moves the runs to that token: the source works again.
    await data(other, 'SOURCES.UPDATE', { sourceId, name: 'c again' });
    expect(await runToEnd(other, sourceId)).toMatchObject({ state: 'done' });
  });

  it('reads a SQLite file in a folder QUARRY_SOURCE_FILE_DIRS names, and a file at a URL, refusing a redirect to a private address', async () => {
    const file = path.join(tmp, 'shop.sqlite');
    const db = new Database(file);
    db.exec(
      `CREATE TABLE items (id INTEGER, name TEXT, weight REAL); INSERT INTO items VALUES (1, 'bolt', 0.5), (2, 'nut', 0.25), (9223372036854775807, 'max', 1.0)`,
    );
    db.close();
    const { sourceId } = await data<{ sourceId: string }>(ann, 'SOURCES.CREATE', {
      name: 'shop',
      index: 'shop',
      kind: 'sqlite',
      connection: { url: file },
      table: 'items',
    });
    expect(await runToEnd(ann, sourceId)).toMatchObject({ state: 'done', loaded: 3 });
    expect((await search(ann, 'shop')).records.map((r) => r.name)).toEqual(['bolt', 'nut', 'max']);
    expect(await rawSearch(ann, 'shop')).toContain('"id":9223372036854775807,');
  });

  describeIf(!mariadbMissing(), mariadbMissing() ?? '', 'MariaDB', () => {
    let maria: TestMariadb;
    beforeAll(async () => {
      maria = await TestMariadb.start();
    }, 300_000);
    afterAll(async () => {
      await maria?.stop();
    });
    it('loads a MariaDB query with its decimals and unsigned bigints exact', async () => {
      await maria.asUser(async (c) => {
        await c.query('CREATE TABLE t (id INT PRIMARY KEY, price DECIMAL(30,10), n BIGINT UNSIGNED)');
        await c.query('INSERT INTO t VALUES (1, 12345678901234567890.0123456789, 18446744073709551615), (2, -0.5, 0)');
      });
      const login = maria.login;
      const { sourceId } = await data<{ sourceId: string }>(ann, 'SOURCES.CREATE', {
        name: 'maria',
        index: 'maria',
        kind: 'mysql',
        connection: {
          url: `mysql://${login.user}:${encodeURIComponent(login.password)}@${login.host}:${login.port}/${login.database}`,
        },
        query: 'SELECT * FROM t',
      });
      const found = (
        await data<{ sources: Array<{ connection: { url: string; hasPassword: boolean } }> }>(ann, 'SOURCES.FIND', {
          sourceId,
        })
      ).sources[0];
      expect(found.connection).toEqual({
        url: `mysql://${login.user}:***@${login.host}:${login.port}/${login.database}`,
        hasPassword: true,
      });
      expect(await runToEnd(ann, sourceId)).toMatchObject({ state: 'done', loaded: 2 });
      const rows = (await search(ann, 'maria')).records.map((r) => [String(r.price), String(r.n)]);
      expect(rows).toEqual([
        ['12345678901234567890.0123456789', '18446744073709551615'],
        ['-0.5000000000', '0'],
      ]);
    });
  });

  it('a URL source whose server redirects to a private address fails that run, naming it', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const { sourceId } = await data<{ sourceId: string }>(ann, 'SOURCES.CREATE', {
        name: 'web',
        index: 'web',
        kind: 'url',
        connection: { url: `http://127.0.0.1:${port}/data.csv` },
      });
      const run = await runToEnd(ann, sourceId);
      expect(run.state).toBe('failed');
      expect(run.error).toMatch(/169\.254\.169\.254/);
      expect((await call(ann, 'QUERIES.EXECUTE', { index: 'web', query: '*' })).error?.code).toBe(404);
    } finally {
      server.close();
    }
  });
});

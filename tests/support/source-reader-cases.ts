import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '@quarry/errors';
import { freePort } from '@quarry/runtime';
import type { SourceRead, SourceReader, SourceSpec } from '../../services/ingest/src/ports/source-reader.port';
import type { Resolver } from '../../services/ingest/src/adapters/source-host-policy';
import { removeStagedFile, type HostAllowed } from '../../services/ingest/src/adapters/source-staging';
import { loadStaged, readStagedCsv, stagedObjects } from './staged-load';

/*
 * What the suites of the source readers (services/ingest/src/adapters/*-source-reader.adapter.int.test.ts)
 * share: a fresh temp folder per test for the staged files, a signal, a rejection read as its AppError,
 * waiting for a read to be under way, and the cases every database reader must pass alike (a table read
 * by name, the cursor, no rows, a refused login, an unreachable or refused host), each suite giving the
 * values and messages of its own database.
 */

/** A signal no one aborts. */
export const signal = (): AbortSignal => new AbortController().signal;

/** Rejects with an AppError, returned for its code and detail. */
export async function failure(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

/** Waits until `check` holds, trying every `everyMs`; throws `message` after `ms`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  ms = 15_000,
  everyMs = 100,
  message = 'condition not reached in time',
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(message);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Whether the staged file exists and holds more than `bytes`: the read is streaming. */
export const stagedPast = (file: string, bytes: number): boolean =>
  fs.existsSync(file) && fs.statSync(file).size > bytes;

/**
 * A temp folder (`<prefix>…`) made before each test and removed after it, and the staged files' paths in
 * it (`staged-1<ext>`, `staged-2<ext>`, …). Call it in the describe block, before the suite's own hooks.
 */
export function stagingFolder(
  prefix: string,
  ext = '.csv',
): { dir: () => string; staged: () => string; last: () => string } {
  let dir = '';
  let n = 0;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    dir: () => dir,
    staged: () => path.join(dir, `staged-${++n}${ext}`),
    last: () => path.join(dir, `staged-${n}${ext}`),
  };
}

/** Runs `work` with the port of a loopback server that accepts connections and never answers. */
export async function withSilentServer<T>(work: (port: number) => Promise<T>): Promise<T> {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  try {
    return await work((silent.address() as net.AddressInfo).port);
  } finally {
    silent.close();
  }
}

/** A test server's login (tests/support/postgres.ts, tests/support/mariadb.ts). */
export interface TestLogin {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

/** A database suite's reader and spec, for the cases below. */
export interface DatabaseSuite {
  reader: SourceReader;
  spec: (over?: Partial<SourceSpec>) => SourceSpec;
  staged: () => string;
}

/** Reads the typed table's query: three rows, a staged CSV only its owner may read. */
export async function readTyped(suite: DatabaseSuite, query: string): Promise<{ file: string; read: SourceRead }> {
  const file = suite.staged();
  const read = await suite.reader.read(suite.spec({ query }), { file, signal: signal() });
  expect(read).toMatchObject({ file, format: 'csv', rows: 3 });
  expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
  return { file, read };
}

/** Reads the query and loads what it staged with Quarry's loader: the stored types by name, and rows. */
export async function loadTyped(
  suite: DatabaseSuite,
  query: string,
): Promise<{ types: Record<string, string>; rows: Array<Record<string, string | null>> }> {
  const file = suite.staged();
  const read = await suite.reader.read(suite.spec({ query }), { file, signal: signal() });
  const loaded = await loadStaged(file, read.columns);
  return { types: Object.fromEntries(loaded.fields.map((f) => [f.name, f.type])), rows: loaded.rows };
}

/** `weird` (a name with the quote character in it) and `qualified` (schema.events) read by name; SQL in a name is a name. */
export async function tableByName(
  suite: DatabaseSuite,
  names: { weird: string; qualified: string },
): Promise<AppError> {
  const { reader, spec, staged } = suite;
  const a = await reader.read(spec({ table: names.weird }), { file: staged(), signal: signal() });
  expect(stagedObjects(a.file)).toEqual([{ v: 'ok' }]);
  const b = await reader.read(spec({ table: names.qualified }), { file: staged(), signal: signal() });
  expect(b.rows).toBe(6);
  return failure(reader.read(spec({ table: 'typed; DROP TABLE typed' }), { file: staged(), signal: signal() }));
}

/**
 * The events table by its cursor: every row with a cursor in cursor order, the rows past a bigint bound
 * past 2^53, the rows past a time bound (`timeBound`) whose maximum (`timeMax`, as the database prints it)
 * is the next read's bound, which reads nothing.
 */
export async function cursorCases(suite: DatabaseSuite, time: { timeBound: string; timeMax: string }): Promise<void> {
  const { reader, spec, staged } = suite;
  const all = await reader.read(spec({ table: 'events' }), {
    file: staged(),
    cursor: { column: 'id' },
    signal: signal(),
  });
  expect(stagedObjects(all.file).map((r) => r.id)).toEqual(['1', '2', '5', '9007199254740992', '9007199254740993']);
  expect(all.cursorMax).toBe('9007199254740993');
  // Past 2^53 the bound compares as the bigint it is, not as a double.
  const past = await reader.read(spec({ table: 'events' }), {
    file: staged(),
    cursor: { column: 'id', after: '9007199254740992' },
    signal: signal(),
  });
  expect(stagedObjects(past.file).map((r) => r.name)).toEqual(['d']);
  expect(past.cursorMax).toBe('9007199254740993');
  // A time cursor: its maximum, as the database prints it, is the next run's bound.
  const byTime = await reader.read(spec({ table: 'events' }), {
    file: staged(),
    cursor: { column: 'at', after: time.timeBound },
    signal: signal(),
  });
  expect(stagedObjects(byTime.file).map((r) => r.name)).toEqual(["it's", 'c', 'd']);
  expect(byTime.cursorMax).toBe(time.timeMax);
  const next = await reader.read(spec({ table: 'events' }), {
    file: staged(),
    cursor: { column: 'at', after: byTime.cursorMax },
    signal: signal(),
  });
  expect(next.rows).toBe(0);
  expect(next.cursorMax).toBeUndefined();
  expect(readStagedCsv(next.file)).toEqual({ header: ['id', 'at', 'name'], records: [] });
}

/** The bound on the text column is a value (its quotes and SQL never run): the rows past it. */
export async function textBound(suite: DatabaseSuite, after: string): Promise<void> {
  const text = await suite.reader.read(suite.spec({ table: 'events' }), {
    file: suite.staged(),
    cursor: { column: 'name', after },
    signal: signal(),
  });
  expect(stagedObjects(text.file).map((r) => r.name)).toEqual(['c', 'd', "it's", 'no cursor']);
}

/** The empty table: its header alone. */
export async function headerAlone(suite: DatabaseSuite): Promise<void> {
  const file = suite.staged();
  const read = await suite.reader.read(suite.spec({ table: 'empty' }), { file, signal: signal() });
  expect(read.rows).toBe(0);
  expect(fs.readFileSync(file, 'utf8')).toBe('"id","name"\n');
}

/**
 * A wrong password refused as `refused` says, never carrying the password, directly and through a
 * `scheme://` URL, and a missing database as `noDatabase` says; no file is left.
 */
export async function refusedLogins(
  suite: DatabaseSuite,
  server: { login: TestLogin },
  expected: { scheme: string; refused: string; noDatabase: string },
): Promise<void> {
  const { reader, spec } = suite;
  const { login } = server;
  const file = suite.staged();
  const secret = 'not-the-password-4242';
  const err = await failure(
    reader.read(spec({ connection: { ...login, password: secret }, table: 'events' }), { file, signal: signal() }),
  );
  expect(err.code).toBe('INVALID_ARGUMENT');
  expect(err.detail).toBe(expected.refused);
  expect(JSON.stringify(err)).not.toContain(secret);
  expect(err.message).not.toContain(secret);
  expect(fs.existsSync(file)).toBe(false);
  // The same through a connection URL.
  const url = `${expected.scheme}://${login.user}:${secret}@${login.host}:${login.port}/${login.database}`;
  const viaUrl = await failure(reader.read(spec({ connection: { url }, table: 'events' }), { file, signal: signal() }));
  expect(viaUrl.detail).toBe(expected.refused);
  const noDb = await failure(
    reader.read(spec({ connection: { ...login, database: 'nope' }, table: 'events' }), { file, signal: signal() }),
  );
  expect(noDb.code).toBe('INVALID_ARGUMENT');
  expect(noDb.detail).toBe(expected.noDatabase);
}

/**
 * A closed port is unreachable; a server that accepts and never answers bounds the login (500 ms);
 * a host the policy refuses is never dialled, one it allows is read. `make` builds the suite's reader
 * with options; `policy` is makeHostPolicy.
 */
export async function unreachableHosts(
  suite: DatabaseSuite,
  server: { port: number; login: TestLogin },
  make: (options: { connectTimeoutMs?: number; hostAllowed?: HostAllowed }) => SourceReader,
  policy: (allow: string[], resolve?: Resolver) => HostAllowed,
  file: string,
): Promise<void> {
  const { reader, spec } = suite;
  const closed = await freePort();
  const err = await failure(
    reader.read(spec({ connection: { ...server.login, port: closed }, table: 'events' }), {
      file,
      signal: signal(),
    }),
  );
  expect(err.code).toBe('UNAVAILABLE');
  expect(err.detail).toBe(`Cannot reach the source at 127.0.0.1:${closed}: connection refused`);
  // A server that accepts the connection and never answers: the login is bounded.
  await withSilentServer(async (silentPort) => {
    const started = Date.now();
    const hung = await failure(
      make({ connectTimeoutMs: 500 }).read(
        spec({ connection: { ...server.login, port: silentPort }, table: 'events' }),
        { file, signal: signal() },
      ),
    );
    expect(hung.code).toBe('UNAVAILABLE');
    expect(hung.detail).toBe(`The source at 127.0.0.1:${silentPort} did not accept the login within 500 ms`);
    expect(Date.now() - started).toBeLessThan(5000);
  });
  const refused = await failure(
    make({ hostAllowed: policy(['db.example.com']) }).read(spec({ table: 'events' }), { file, signal: signal() }),
  );
  expect(refused.code).toBe('FORBIDDEN');
  expect(refused.detail).toBe(`127.0.0.1:${server.port} does not match QUARRY_SOURCE_ALLOW`);
  const allowed = make({ hostAllowed: policy([`127.0.0.1:${server.port}`]) });
  expect((await allowed.read(spec({ table: 'events' }), { file, signal: signal() })).rows).toBe(6);
  removeStagedFile(file);
  // Dialled at the address the check answered: `.invalid` never resolves (RFC 6761), so a driver that
  // asked DNS again (what a rebinding name exploits) could not connect at all.
  const asked: string[] = [];
  const pinned = make({
    hostAllowed: policy([`db.quarry.invalid:${server.port}`], async (host) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    }),
  });
  const read = await pinned.read(
    spec({ connection: { ...server.login, host: 'db.quarry.invalid' }, table: 'events' }),
    { file, signal: signal() },
  );
  expect(read.rows).toBe(6);
  expect(asked).toEqual(['db.quarry.invalid']);
}

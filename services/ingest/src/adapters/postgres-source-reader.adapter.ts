import net, { type LookupFunction } from 'node:net';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { AppError } from '@quarry/errors';
import type { SourceColumn, SourceRead, SourceReader, SourceSpec } from '../ports/source-reader.port';
import {
  checkedTarget,
  connectionLost,
  DriverFailure,
  explainDriverError,
  framedRead,
  loginWithin,
  stagedRead,
  type ReadProgress,
} from './database-source-read';
import {
  checkColumnNames,
  cursorIndex,
  settleWithin,
  writeCsvRecords,
  type DatabaseTarget,
  type HostAllowed,
} from './source-staging';

/*
 * SourceReader for PostgreSQL (the `pg` driver; rows written by PostgreSQL's own COPY … TO STDOUT in CSV,
 * pg-copy-streams).
 *
 * Guarantees, beyond the port's:
 * - the query's result columns are described first (`SELECT * FROM (<query>) q LIMIT 0`, each type named
 *   through pg_type, domains by their base type), then the rows are copied by PostgreSQL as CSV bytes
 *   straight into the staged file, with backpressure from the file to the socket (rows are never all in
 *   memory, and no value is handled in JS: the read goes at psql's `\copy` pace);
 * - describe, the cursor's maximum and the copy run in one READ ONLY, REPEATABLE READ transaction: one
 *   snapshot of the data, and a query that would write fails;
 * - every value is converted to text by PostgreSQL in a session set to TimeZone UTC, DateStyle ISO,
 *   extra_float_digits 1 (floats print exactly) and bytea_output hex; an empty text is written as a
 *   missing value, as NULL is (the CSV writer of the other readers does the same). Types: int2/int4 →
 *   integer, float4/float8 → number, bool → boolean (`true`/`false`), date → date (`YYYY-MM-DD`),
 *   timestamptz → timestamp (the instant in UTC, `2001-02-03 04:05:06.123456+00`), timestamp → timestamp
 *   (its wall time, marked `+00`), numeric, int8 and money (as numeric) → no type, the loader's inference
 *   keeps every digit; json, jsonb, text, varchar, uuid and every other type → string, as PostgreSQL prints it;
 * - the cursor bound is a bound parameter (`set_config('quarry.cursor_after', $1, true)`, COPY takes none),
 *   read back cast to the column's type (`q.cursor > current_setting(…)::type`): a bound that is not a
 *   value of that type is refused by the database, never run; rows with a null cursor are left out, rows
 *   come in cursor order and `cursorMax` is their largest cursor as PostgreSQL prints it;
 * - `table` is quoted as an identifier (`schema.table` allowed);
 * - the host is checked by `hostAllowed` before it is dialled; the login waits connectTimeoutMs at most;
 *   an aborted signal cancels the running statement (a CancelRequest) and closes the connection;
 * - errors are AppErrors: a refused login INVALID_ARGUMENT naming the user, an unreachable host or a
 *   connection lost mid-read UNAVAILABLE, a failing query INVALID_ARGUMENT with PostgreSQL's message; the
 *   password is in none of them (nor is PGPASSWORD or ~/.pgpass ever consulted).
 */

export interface PostgresSourceReaderOptions {
  /** The host policy (QUARRY_SOURCE_ALLOW): called with `postgres://host:port` before connecting. */
  hostAllowed?: HostAllowed;
  /** How long the TCP connect, TLS and login may take (default 10 s). */
  connectTimeoutMs?: number;
}

/** Every value as the text PostgreSQL sent: no type parser runs. */
const RAW_TEXT = { getTypeParser: () => (value: string) => value };

/** The loader's type for a PostgreSQL base type (none: inference, which keeps every digit). */
function loaderType(typname: string): SourceColumn['type'] {
  switch (typname) {
    case 'int2':
    case 'int4':
      return 'integer';
    case 'float4':
    case 'float8':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'date':
      return 'date';
    case 'timestamptz':
    case 'timestamp':
      return 'timestamp';
    case 'numeric':
    case 'int8':
    case 'money':
      return undefined;
    default:
      return 'string';
  }
}

interface Described {
  name: string;
  dbType: string;
  /** The type without its modifiers (`numeric`, not `numeric(10,2)`): what the cursor bound is cast to. */
  bare: string;
  base: string;
}

/**
 * A column's value as the staged CSV holds it, written by PostgreSQL: its text in the session's settings
 * (UTC, ISO dates, exact floats, hex bytea); money as numeric; a timestamptz as PostgreSQL prints an
 * instant in UTC (`2001-02-03 04:05:06.123456+00`), a timestamp's wall time marked `+00` so that the
 * loader stores that very wall time whatever its own machine's zone (infinity, a BC date or a year past
 * 9999 stays as PostgreSQL prints it, for the loader to refuse that row naming the value). to_char would
 * spell them alike but costs the backend twice the copy.
 */
function textOf(c: Described, value: string): string {
  if (c.base === 'money') return `${value}::numeric::text`;
  if (c.base === 'timestamp')
    return `CASE WHEN isfinite(${value}) THEN ${value}::text || '+00' ELSE ${value}::text END`;
  return `${value}::text`;
}

type PgError = Error & { code?: string; severity?: string };

/** A socket for pg whose `connect(port, host)` dials through `lookup` (pg calls it with the name). */
function pinnedSocket(lookup: LookupFunction): net.Socket {
  const socket = new net.Socket();
  const dial = socket.connect.bind(socket) as (options: net.TcpSocketConnectOpts) => net.Socket;
  const connect = (port: number, host: string) => dial({ port, host, lookup });
  return Object.assign(socket, { connect }) as net.Socket;
}

/** Sends PostgreSQL's CancelRequest for a backend: what libpq's PQcancel does, on a connection of its own. */
function sendCancel(
  target: DatabaseTarget,
  lookup: LookupFunction | undefined,
  processID: number,
  secretKey: number,
): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port, ...(lookup ? { lookup } : {}) });
    const done = () => {
      socket.destroy();
      resolve();
    };
    socket.setTimeout(5000, done);
    socket.on('error', done);
    socket.on('close', done);
    socket.on('connect', () => {
      const msg = Buffer.alloc(16);
      msg.writeInt32BE(16, 0);
      msg.writeInt32BE(80877102, 4);
      msg.writeInt32BE(processID, 8);
      msg.writeInt32BE(secretKey, 12);
      socket.end(msg);
    });
  });
}

export class PostgresSourceReader implements SourceReader {
  private readonly connectTimeoutMs: number;

  constructor(private readonly options: PostgresSourceReaderOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  }

  async read(
    spec: SourceSpec,
    options: { file: string; cursor?: { column: string; after?: string }; signal: AbortSignal },
  ): Promise<SourceRead> {
    const { signal } = options;
    const { target, sql, lookup } = await checkedTarget(
      spec,
      { kind: 'postgres', reader: 'PostgresSourceReader', schemes: ['postgres', 'postgresql'], port: 5432, quote: '"' },
      this.options.hostAllowed,
      signal,
    );

    const client = new pg.Client({
      host: target.host,
      port: target.port,
      user: target.user,
      database: target.database,
      // A function: pg then never falls back to PGPASSWORD or ~/.pgpass of this server.
      password: async () => target.password ?? '',
      // TLS verifies the server's certificate and name (pg sets the name for SNI); off unless asked for.
      ssl: target.ssl,
      connectionTimeoutMillis: this.connectTimeoutMs,
      application_name: 'quarry-ingest',
      keepAlive: true,
      types: RAW_TEXT,
      // Dialled at the addresses the host policy checked; TLS (SNI and the certificate) still uses the name.
      ...(lookup ? { stream: () => pinnedSocket(lookup) } : {}),
    });
    // A connection that fails between queries reports here; the query under way rejects with it too.
    client.on('error', () => undefined);
    return framedRead({
      file: options.file,
      signal,
      cancel: (progress) => {
        const backend = client as unknown as { processID?: number; secretKey?: number };
        if (progress.stage !== 'connect' && backend.processID !== undefined && backend.secretKey !== undefined)
          return sendCancel(target, lookup, backend.processID, backend.secretKey);
        return undefined;
      },
      cancelWithinMs: 2000,
      explain: (err, progress) => this.explain(err, target, progress),
      close: () => this.close(client),
      read: async (progress) => {
        // Within connectTimeoutMs (pg's own timer is the backstop) or an abort, whichever is first.
        await loginWithin(client.connect(), { target, timeoutMs: this.connectTimeoutMs, signal });
        progress.stage = 'query';
        await client.query(
          "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; SET IntervalStyle TO 'postgres'; SET extra_float_digits TO 1; SET bytea_output TO 'hex'; BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        );
        const columns = await this.describe(client, sql);
        const names = columns.map((c) => c.name);
        checkColumnNames(names);
        const at = options.cursor ? cursorIndex(names, options.cursor.column) : -1;
        const alias = columns.map((_, i) => `c${i}`);
        const from = `FROM (\n${sql}\n) AS q(${alias.join(', ')})`;
        let where = '';
        if (options.cursor) {
          const cursorCol = `q.c${at}`;
          // COPY takes no parameters: the bound is a parameter of set_config, read back typed by the column.
          if (options.cursor.after !== undefined) {
            await client.query("SELECT set_config('quarry.cursor_after', $1, true)", [options.cursor.after]);
            where = ` WHERE ${cursorCol} > current_setting('quarry.cursor_after')::${columns[at]!.bare} AND ${cursorCol} IS NOT NULL`;
          } else where = ` WHERE ${cursorCol} IS NOT NULL`;
        }
        // The largest cursor, in the same snapshot as the rows (REPEATABLE READ), as PostgreSQL prints it
        // (what the next run's bound is cast back from).
        let cursorMax: string | undefined;
        if (at >= 0) {
          const max = await client.query<[string | null]>({
            text: `SELECT ${columns[at]!.base === 'money' ? 'm::numeric::text' : 'm::text'} FROM (SELECT max(q.c${at}) AS m ${from}${where}) AS s`,
            rowMode: 'array',
          } as pg.QueryConfig);
          cursorMax = max.rows[0]?.[0] ?? undefined;
        }
        const oneColumn = columns.length === 1;
        const values = columns.map((c, i) => {
          const text = `NULLIF(${textOf(c, `q.c${i}`)}, '')`;
          // A lone column's missing value is written "" (an empty line would be no record), as writeCsv does.
          return oneColumn ? `COALESCE(${text}, '')` : text;
        });
        const order = at >= 0 ? ` ORDER BY q.c${at}` : '';
        const copy = `COPY (SELECT ${values.map((v, i) => `${v} AS c${i}`).join(', ')} ${from}${where}${order}) TO STDOUT WITH (FORMAT csv${oneColumn ? ', FORCE_QUOTE (c0)' : ''})`;
        progress.stage = 'read';
        const stream = client.query(copyTo(copy));
        // The server's last word (a FATAL before it hangs up) reaches the copy stream; the end of the
        // connection may be all the pipeline ever sees, so it fails with that word when there was one.
        let lastError: unknown;
        stream.on('error', (e: unknown) => (lastError ??= e));
        const lost = connectionLost((reject) =>
          client.once('end', () => reject(lastError ?? new Error('Connection terminated unexpectedly'))),
        );
        // Progress only (messages say after how many rows): a newline inside a quoted value counts too.
        await writeCsvRecords(
          options.file,
          names,
          stream,
          signal,
          (chunk) => {
            for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) progress.rows += 1;
          },
          lost,
        );
        progress.rows = stream.rowCount;
        progress.written = true;
        await client.query('COMMIT');
        return stagedRead(
          options.file,
          progress.rows,
          columns.map((c) => ({ name: c.name, dbType: c.dbType, type: loaderType(c.base) })),
          cursorMax,
        );
      },
    });
  }

  /** The query's columns: names, PostgreSQL's type names (with modifiers) and base types. */
  private async describe(client: pg.Client, sql: string): Promise<Described[]> {
    // The extended protocol: the query must be one statement. Sent as a simple query, a `;` in it could
    // end the read-only transaction (`…) q; COMMIT; CREATE TABLE …`) and run writes.
    const probe = await client.query({
      text: `SELECT * FROM (\n${sql}\n) AS q LIMIT 0`,
      rowMode: 'array',
      queryMode: 'extended',
    } as pg.QueryConfig);
    const fields = probe.fields;
    if (fields.length === 0) return [];
    const types = await client.query<{ i: string; db_type: string; bare: string; base: string }>(
      `WITH RECURSIVE f AS (
         SELECT f.oid, f.mod, f.i FROM unnest($1::oid[], $2::int[]) WITH ORDINALITY AS f(oid, mod, i)
       ), b(i, oid) AS (
         SELECT i, oid FROM f
         UNION ALL
         SELECT b.i, t.typbasetype FROM b JOIN pg_type t ON t.oid = b.oid WHERE t.typtype = 'd'
       )
       SELECT f.i::text AS i, format_type(f.oid, f.mod) AS db_type, format_type(f.oid, NULL) AS bare,
              t.typname::text AS base
       FROM f JOIN b ON b.i = f.i JOIN pg_type t ON t.oid = b.oid AND t.typtype <> 'd'
       ORDER BY f.i`,
      [fields.map((f) => f.dataTypeID), fields.map((f) => f.dataTypeModifier)],
    );
    const byIndex = new Map(types.rows.map((r) => [Number(r.i), r]));
    return fields.map((f, k) => {
      const t = byIndex.get(k + 1);
      return {
        name: f.name,
        dbType: t?.db_type ?? `oid ${f.dataTypeID}`,
        bare: t?.bare ?? 'text',
        base: t?.base ?? '',
      };
    });
  }

  /** Ends the session (rolling back what is open); a connection that does not end in time is cut. */
  private async close(client: pg.Client): Promise<void> {
    const ending = client.end();
    await settleWithin(ending, 2000);
    const socket = (client as unknown as { connection?: { stream?: net.Socket } }).connection?.stream;
    if (socket && !socket.destroyed) socket.destroy();
  }

  /** A driver's error as the AppError a caller can act on, without the password. */
  private explain(err: unknown, target: DatabaseTarget, progress: ReadProgress): AppError {
    const e = err as PgError;
    const failure = new DriverFailure(target, progress, this.connectTimeoutMs, String(e?.message ?? err), e?.code);
    return explainDriverError(err, failure, {
      codes: (f) => {
        switch (f.code) {
          case '28P01':
            return f.loginRefused('password authentication failed');
          case '28000':
            return f.loginRefused(f.message);
          case '3D000':
            return f.noDatabase();
          case '42501':
            return AppError.invalid(`The source refused to read for user "${target.user}": ${f.message}`);
          case '25006':
            return f.writes();
          case '57014':
            return f.cancelled();
          case '53300':
          case '57P03':
            return f.busy();
          case '57P01':
          case '57P02':
          case '57P05':
            return f.lost(f.message);
          case 'ETIMEDOUT':
            return f.unreachable();
          case 'ECONNRESET':
          case 'EPIPE':
            return f.lost(f.code);
        }
        return undefined;
      },
      then: (f) => {
        if (f.code.startsWith('08')) return f.lost(f.message);
        if (f.connecting && /^timeout expired|connection timeout/.test(f.message)) return f.loginTimeout();
        if (/^Connection terminated|^timeout expired/.test(f.message))
          return f.connecting
            ? AppError.unavailable(`The source at ${f.where} closed the connection during the login (${f.message})`)
            : f.lost(f.message);
        if (/does not support SSL/i.test(f.message)) return f.noTls();
        return undefined;
      },
      isServerError: e?.severity !== undefined && /^[0-9A-Z]{5}$/.test(e?.code ?? ''),
    });
  }
}

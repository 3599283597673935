import net, { type LookupFunction } from 'node:net';
import mysql from 'mysql2';
import type { Connection, ConnectionOptions, FieldPacket } from 'mysql2';
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
  bytesText,
  checkColumnNames,
  cursorIndex,
  settleWithin,
  timestampText,
  writeCsv,
  type DatabaseTarget,
  type HostAllowed,
  type StagedValue,
} from './source-staging';

/*
 * SourceReader for MySQL and MariaDB (the `mysql2` driver, rows streamed).
 *
 * Guarantees, beyond the port's:
 * - the query's result columns are described first (`SELECT * FROM (<query>) q LIMIT 0`), then its rows
 *   are streamed with backpressure: the driver pauses the socket while the staged file is behind;
 * - describe and read run in one READ ONLY transaction WITH CONSISTENT SNAPSHOT (REPEATABLE READ);
 * - every value is read as the bytes the server sent in the text protocol (no driver conversion) in a
 *   session with time_zone '+00:00' (a TIMESTAMP is the instant printed in UTC) and charset utf8mb4.
 *   Types: TINYINT(1)/BOOL → boolean (0 `false`, 1 `true`; any other value is written as it is, for the
 *   loader to refuse that row rather than store another), other TINYINT, SMALLINT, MEDIUMINT, INT and
 *   YEAR → integer, FLOAT/DOUBLE → number, BIGINT, DECIMAL and BIT (as decimal digits) → no type (the
 *   loader's inference keeps every digit), DATE → date, DATETIME → timestamp (its wall time), TIMESTAMP →
 *   timestamp (the instant, UTC), both written `2001-02-03T04:05:06.123456Z`; JSON, text and every other
 *   type → string; binary strings as `\x` and hex;
 * - the cursor bound reaches the server as a bound parameter (a prepared `SET @v = ?`, then a statement
 *   prepared on the server, `EXECUTE … USING @v`), compared as a value of the cursor column's type
 *   (checked here first for numbers and dates: MySQL would read a malformed one as 0 or NULL);
 *   rows with a null cursor are left out, rows come in cursor order, `cursorMax` is the last one's
 *   cursor as the server prints it;
 * - `table` is quoted as an identifier (`schema.table` allowed); LOCAL INFILE is off;
 * - the host is checked by `hostAllowed` before it is dialled; the login waits connectTimeoutMs at most;
 *   an aborted signal kills the running statement (`KILL QUERY` from a second connection) and closes the
 *   connection;
 * - errors are AppErrors: a refused login INVALID_ARGUMENT naming the user, an unreachable host or a
 *   connection lost mid-read UNAVAILABLE, a failing query INVALID_ARGUMENT with the server's message; the
 *   password is in none of them.
 */

export interface MysqlSourceReaderOptions {
  /** The host policy (QUARRY_SOURCE_ALLOW): called with `mysql://host:port` before connecting. */
  hostAllowed?: HostAllowed;
  /** How long the TCP connect, TLS and login may take (default 10 s). */
  connectTimeoutMs?: number;
  /** Rows buffered between the socket and the file (default 1000). */
  highWaterMark?: number;
}

/** MySQL's column types (protocol numbers), as named in its sources. */
const T = {
  DECIMAL: 0,
  TINY: 1,
  SHORT: 2,
  LONG: 3,
  FLOAT: 4,
  DOUBLE: 5,
  NULL: 6,
  TIMESTAMP: 7,
  LONGLONG: 8,
  INT24: 9,
  DATE: 10,
  TIME: 11,
  DATETIME: 12,
  YEAR: 13,
  NEWDATE: 14,
  VARCHAR: 15,
  BIT: 16,
  TIMESTAMP2: 17,
  DATETIME2: 18,
  TIME2: 19,
  JSON: 245,
  NEWDECIMAL: 246,
  ENUM: 247,
  SET: 248,
  TINY_BLOB: 249,
  MEDIUM_BLOB: 250,
  LONG_BLOB: 251,
  BLOB: 252,
  VAR_STRING: 253,
  STRING: 254,
  GEOMETRY: 255,
} as const;

const UNSIGNED_FLAG = 32;
const BINARY_CHARSET = 63;

const INTEGERS = new Set<number>([T.TINY, T.SHORT, T.LONG, T.INT24, T.LONGLONG, T.YEAR]);
const DECIMALS = new Set<number>([T.DECIMAL, T.NEWDECIMAL]);
const FLOATS = new Set<number>([T.FLOAT, T.DOUBLE]);
const DATES = new Set<number>([T.DATE, T.NEWDATE]);
const DATETIMES = new Set<number>([T.DATETIME, T.DATETIME2, T.TIMESTAMP, T.TIMESTAMP2]);
const STRINGS = new Set<number>([
  T.VARCHAR,
  T.VAR_STRING,
  T.STRING,
  T.TINY_BLOB,
  T.MEDIUM_BLOB,
  T.LONG_BLOB,
  T.BLOB,
  T.ENUM,
  T.SET,
]);

interface Described {
  name: string;
  dbType: string;
  columnType: number;
  unsigned: boolean;
  /** TINYINT(1): MySQL's BOOL. */
  bool: boolean;
  /** Bytes with no character set (BINARY, VARBINARY, BLOB, GEOMETRY): written as hex. */
  binary: boolean;
}

function flagsOf(f: FieldPacket): number {
  return typeof f.flags === 'number' ? f.flags : 0;
}

function describeField(f: FieldPacket): Described {
  const type = f.columnType ?? f.type ?? -1;
  const unsigned = (flagsOf(f) & UNSIGNED_FLAG) !== 0;
  const length = f.columnLength ?? f.length ?? 0;
  const charset = f.characterSet ?? f.charsetNr;
  const binary = type === T.GEOMETRY || (STRINGS.has(type) && charset === BINARY_CHARSET);
  const bool = type === T.TINY && length === 1;
  const u = unsigned ? ' UNSIGNED' : '';
  const frac = f.decimals > 0 && f.decimals <= 6 ? `(${f.decimals})` : '';
  let dbType: string;
  switch (type) {
    case T.TINY:
      dbType = `TINYINT${bool ? '(1)' : ''}${u}`;
      break;
    case T.SHORT:
      dbType = `SMALLINT${u}`;
      break;
    case T.INT24:
      dbType = `MEDIUMINT${u}`;
      break;
    case T.LONG:
      dbType = `INT${u}`;
      break;
    case T.LONGLONG:
      dbType = `BIGINT${u}`;
      break;
    case T.DECIMAL:
    case T.NEWDECIMAL: {
      const precision = length - (f.decimals > 0 ? 1 : 0) - (unsigned ? 0 : 1);
      dbType = `DECIMAL(${precision},${f.decimals})${u}`;
      break;
    }
    case T.FLOAT:
      dbType = 'FLOAT';
      break;
    case T.DOUBLE:
      dbType = 'DOUBLE';
      break;
    case T.DATE:
    case T.NEWDATE:
      dbType = 'DATE';
      break;
    case T.DATETIME:
    case T.DATETIME2:
      dbType = `DATETIME${frac}`;
      break;
    case T.TIMESTAMP:
    case T.TIMESTAMP2:
      dbType = `TIMESTAMP${frac}`;
      break;
    case T.TIME:
    case T.TIME2:
      dbType = `TIME${frac}`;
      break;
    case T.YEAR:
      dbType = 'YEAR';
      break;
    case T.BIT:
      dbType = `BIT(${length})`;
      break;
    case T.JSON:
      dbType = 'JSON';
      break;
    case T.GEOMETRY:
      dbType = 'GEOMETRY';
      break;
    case T.VARCHAR:
    case T.VAR_STRING:
      dbType = binary ? 'VARBINARY' : 'VARCHAR';
      break;
    case T.STRING:
      dbType = binary ? 'BINARY' : 'CHAR';
      break;
    case T.TINY_BLOB:
    case T.MEDIUM_BLOB:
    case T.LONG_BLOB:
    case T.BLOB:
      dbType = binary ? 'BLOB' : 'TEXT';
      break;
    default:
      dbType = `type ${type}`;
  }
  // MariaDB names its JSON (a LONGTEXT) and its own types in extended metadata.
  if (f.extendedFormat === 'json') dbType = 'JSON';
  else if (f.extendedTypeName) dbType = f.extendedTypeName.toUpperCase();
  return { name: f.name, dbType, columnType: type, unsigned, bool, binary };
}

function loaderType(c: Described): SourceColumn['type'] {
  if (c.bool) return 'boolean';
  if (c.columnType === T.LONGLONG || DECIMALS.has(c.columnType) || c.columnType === T.BIT) return undefined;
  if (INTEGERS.has(c.columnType)) return 'integer';
  if (FLOATS.has(c.columnType)) return 'number';
  if (DATES.has(c.columnType)) return 'date';
  if (DATETIMES.has(c.columnType)) return 'timestamp';
  return 'string';
}

/** The bytes of one value as the staged text. */
function valueText(c: Described, bytes: Buffer | null): StagedValue {
  if (bytes === null) return null;
  if (c.binary) return bytesText(bytes);
  if (c.columnType === T.BIT) {
    let n = 0n;
    for (const b of bytes) n = (n << 8n) | BigInt(b);
    return n.toString();
  }
  const text = bytes.toString('utf8');
  if (c.bool) return text === '0' ? 'false' : text === '1' ? 'true' : text;
  if (DATETIMES.has(c.columnType)) return timestampText(text);
  return text;
}

const BOUND_SHAPES: Array<{ test: (c: Described) => boolean; shape: RegExp; what: string }> = [
  { test: (c) => INTEGERS.has(c.columnType), shape: /^-?\d+$/, what: 'an integer' },
  { test: (c) => DECIMALS.has(c.columnType), shape: /^-?\d+(\.\d+)?$/, what: 'a decimal number' },
  { test: (c) => FLOATS.has(c.columnType), shape: /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/, what: 'a number' },
  { test: (c) => DATES.has(c.columnType), shape: /^\d{4}-\d{2}-\d{2}$/, what: 'a date (YYYY-MM-DD)' },
  {
    test: (c) => DATETIMES.has(c.columnType),
    shape: /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/,
    what: 'a date and time (YYYY-MM-DD HH:MM:SS[.ffffff])',
  },
];

/** The parameter as a value of the cursor column's type (a string compares in the column's collation). */
function boundExpr(c: Described): string {
  if (INTEGERS.has(c.columnType)) return c.unsigned ? 'CAST(? AS UNSIGNED)' : 'CAST(? AS SIGNED)';
  if (DECIMALS.has(c.columnType)) return 'CAST(? AS DECIMAL(65,30))';
  if (FLOATS.has(c.columnType)) return 'CAST(? AS DOUBLE)';
  if (DATES.has(c.columnType)) return 'CAST(? AS DATE)';
  if (DATETIMES.has(c.columnType)) return 'CAST(? AS DATETIME(6))';
  return '?';
}

const quoteIdent = (name: string) => `\`${name.split('`').join('``')}\``;

type MysqlError = Error & { code?: string; errno?: number; sqlMessage?: string; fatal?: boolean };

/** mysql2's own socket (keep-alive, no Nagle), dialled through `lookup`. */
function pinnedSocket(target: DatabaseTarget, lookup: LookupFunction): net.Socket {
  const socket = net.connect({ host: target.host, port: target.port, lookup });
  socket.setNoDelay(true);
  socket.once('connect', () => socket.setKeepAlive(true));
  return socket;
}

export class MysqlSourceReader implements SourceReader {
  private readonly connectTimeoutMs: number;
  private readonly highWaterMark: number;

  constructor(private readonly options: MysqlSourceReaderOptions = {}) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.highWaterMark = options.highWaterMark ?? 1000;
  }

  async read(
    spec: SourceSpec,
    options: { file: string; cursor?: { column: string; after?: string }; signal: AbortSignal },
  ): Promise<SourceRead> {
    const { signal } = options;
    const { target, sql, lookup } = await checkedTarget(
      spec,
      { kind: 'mysql', reader: 'MysqlSourceReader', schemes: ['mysql', 'mariadb'], port: 3306, quote: '`' },
      this.options.hostAllowed,
      signal,
    );

    const config: ConnectionOptions = {
      host: target.host,
      port: target.port,
      user: target.user,
      password: target.password ?? '',
      database: target.database,
      // verifyIdentity: the certificate must name the host (mysql2 checks only the chain without it).
      ...(target.ssl ? { ssl: { rejectUnauthorized: true, verifyIdentity: true } } : {}),
      connectTimeout: this.connectTimeoutMs,
      charset: 'utf8mb4',
      timezone: 'Z',
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      decimalNumbers: false,
      multipleStatements: false,
      flags: ['-LOCAL_FILES'],
      // Dialled at the addresses the host policy checked (the kill connection too); TLS still checks the name.
      ...(lookup ? { stream: () => pinnedSocket(target, lookup) } : {}),
    };
    let connection: Connection | undefined;
    return framedRead({
      file: options.file,
      signal,
      cancel: (progress) =>
        connection && progress.stage !== 'connect' ? this.killQuery(config, connection.threadId) : undefined,
      cancelWithinMs: 5000,
      explain: (err, progress) => this.explain(err, target, progress),
      close: async () => {
        if (connection) await this.close(connection);
      },
      read: async (progress) => {
        connection = await this.connect(config, target, signal);
        const c = connection;
        progress.stage = 'query';
        const run = (text: string) =>
          new Promise<FieldPacket[]>((resolve, reject) =>
            c.query({ sql: text, rowsAsArray: true }, (err, _rows, fields) =>
              err ? reject(err) : resolve((fields as FieldPacket[] | undefined) ?? []),
            ),
          );
        await run("SET time_zone = '+00:00'");
        await run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        await run('START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT');
        const columns = (await run(`SELECT * FROM (\n${sql}\n) AS q LIMIT 0`)).map(describeField);
        const names = columns.map((col) => col.name);
        checkColumnNames(names);
        const at = options.cursor ? cursorIndex(names, options.cursor.column) : -1;
        let text = `SELECT * FROM (\n${sql}\n) AS q`;
        let prepared = false;
        if (options.cursor) {
          const col = `q.${quoteIdent(options.cursor.column)}`;
          const after = options.cursor.after;
          if (after !== undefined) {
            const cursorCol = columns[at];
            const shape = BOUND_SHAPES.find((s) => s.test(cursorCol));
            if (shape && !shape.shape.test(after))
              throw AppError.invalid(
                `The cursor bound ${JSON.stringify(after)} is not ${shape.what}, as column "${cursorCol.name}" (${cursorCol.dbType}) is`,
              );
            const statement = `${text} WHERE ${col} > ${boundExpr(cursorCol)} AND ${col} IS NOT NULL ORDER BY ${col}`;
            // Both go to the server as bound values of a prepared statement: the query text needs no quoting,
            // and the bound is a value the statement compares with, never SQL.
            await new Promise<void>((resolve, reject) =>
              c.execute('SET @quarry_read = ?, @quarry_after = ?', [statement, after], (err) =>
                err ? reject(err) : resolve(),
              ),
            );
            await run('PREPARE quarry_read FROM @quarry_read');
            prepared = true;
            text = 'EXECUTE quarry_read USING @quarry_after';
          } else text = `${text} WHERE ${col} IS NOT NULL ORDER BY ${col}`;
        }
        progress.stage = 'read';
        const stream = c
          .query({
            sql: text,
            rowsAsArray: true,
            // The bytes as sent: valueText decodes them by the described column.
            typeCast: (field) => field.buffer(),
          })
          .stream({ highWaterMark: this.highWaterMark });
        let cursorMax: string | undefined;
        // A connection lost mid-read reaches the connection, not a streamed query: the read is failed from there.
        const lost = connectionLost((reject) => {
          c.once('error', reject);
          c.once('end', () =>
            reject(Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' })),
          );
        });
        await writeCsv(
          options.file,
          names,
          stream,
          signal,
          (raw) => {
            progress.rows += 1;
            const row = (raw as unknown as Array<Buffer | null>).map((v, i) => valueText(columns[i], v));
            if (at >= 0) {
              const v = raw[at] as unknown as Buffer | null;
              if (v !== null) cursorMax = v.toString('utf8');
            }
            return row;
          },
          lost,
        );
        progress.written = true;
        if (prepared) await run('DEALLOCATE PREPARE quarry_read');
        await run('COMMIT');
        return stagedRead(
          options.file,
          progress.rows,
          columns.map((col) => ({ name: col.name, dbType: col.dbType, type: loaderType(col) })),
          cursorMax,
        );
      },
    });
  }

  private connect(config: ConnectionOptions, target: DatabaseTarget, signal: AbortSignal): Promise<Connection> {
    const c = mysql.createConnection(config);
    // A connection that fails between statements reports here; the statement under way rejects with it too.
    c.on('error', () => undefined);
    const connecting = new Promise<Connection>((resolve, reject) =>
      c.connect((err) => {
        if (err) {
          c.destroy();
          reject(err);
        } else resolve(c);
      }),
    );
    // The driver's connectTimeout is the bound; this timer, a second later, the backstop.
    return loginWithin(connecting, {
      target,
      timeoutMs: this.connectTimeoutMs,
      after: this.connectTimeoutMs + 1000,
      signal,
      giveUp: () => c.destroy(),
    });
  }

  /** `KILL QUERY` for the reading connection, from a connection of its own (what the mysql client's ^C does). */
  private killQuery(config: ConnectionOptions, threadId: number): Promise<void> {
    if (!Number.isSafeInteger(threadId)) return Promise.resolve();
    return new Promise((resolve) => {
      const killer = mysql.createConnection({ ...config, connectTimeout: 5000 });
      killer.on('error', () => undefined);
      killer.query(`KILL QUERY ${threadId}`, () => {
        killer.destroy();
        resolve();
      });
    });
  }

  /** Ends the session (rolling back what is open); a connection that does not end in time is cut. */
  private async close(c: Connection): Promise<void> {
    await settleWithin(new Promise<void>((resolve) => c.end(() => resolve())), 2000);
    c.destroy();
  }

  /** A driver's error as the AppError a caller can act on, without the password. */
  private explain(err: unknown, target: DatabaseTarget, progress: ReadProgress): AppError {
    const e = err as MysqlError;
    const failure = new DriverFailure(
      target,
      progress,
      this.connectTimeoutMs,
      String(e?.sqlMessage ?? e?.message ?? err),
      e?.code,
    );
    return explainDriverError(err, failure, {
      codes: (f) => {
        switch (f.code) {
          case 'ER_ACCESS_DENIED_ERROR':
          case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
            return f.loginRefused('access denied (wrong user or password)');
          case 'ER_HOST_NOT_PRIVILEGED':
          case 'ER_HOST_IS_BLOCKED':
            return f.refusedConnection();
          case 'ER_DBACCESS_DENIED_ERROR':
            return AppError.invalid(`The source refused user "${target.user}" the database "${target.database}"`);
          case 'ER_BAD_DB_ERROR':
            return f.noDatabase();
          case 'ER_CON_COUNT_ERROR':
          case 'ER_TOO_MANY_USER_CONNECTIONS':
            return f.busy();
          case 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION':
            return f.writes();
          case 'ER_QUERY_INTERRUPTED':
          case 'ER_STATEMENT_TIMEOUT':
            return f.cancelled();
          case 'ER_CONNECTION_KILLED':
          case 'ER_SERVER_SHUTDOWN':
          case 'PROTOCOL_CONNECTION_LOST':
          case 'ECONNRESET':
          case 'EPIPE':
            return f.lost(f.message);
          case 'ETIMEDOUT':
            return f.connecting ? f.loginTimeout() : f.lost(f.message);
          case 'HANDSHAKE_NO_SSL_SUPPORT':
            return f.noTls();
        }
        return undefined;
      },
      isServerError: e?.errno !== undefined && (e?.code ?? '').startsWith('ER_'),
      otherwise: (f) => {
        if (!e?.fatal) return undefined;
        return f.connecting
          ? AppError.unavailable(`Cannot reach the source at ${f.where}: ${f.message}`)
          : f.lost(f.message);
      },
    });
  }
}

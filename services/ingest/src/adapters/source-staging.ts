import fs from 'node:fs';
import type { LookupFunction } from 'node:net';
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { AppError, abortReason } from '@quarry/errors';
import type { SourceConnection, SourceSpec } from '../ports/source-reader.port';

/*
 * What the source readers share: the staged file (created here, 0600, removed on any failure), the CSV
 * it holds (a header whose names are all quoted, then one record per row, quoted where a value needs it),
 * and the spelling of values the loader reads exactly.
 */

/** A value as the staged CSV holds it: text, or null for SQL NULL (an empty field, which the loader reads as missing). */
export type StagedValue = string | null;

/** Creates the staged file, refusing one that exists: a reader never writes over a file it did not create. */
export function createStagedFile(file: string): number {
  try {
    return fs.openSync(file, 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw AppError.internal(`The staged file ${file} exists already`, err);
    throw AppError.internal(`Cannot create the staged file ${file} (${code ?? 'error'})`, err);
  }
}

/** The file gone, whatever state it is in (it may never have been created). */
export function removeStagedFile(file: string): void {
  fs.rmSync(file, { force: true });
}

/**
 * The header record with every name quoted: the loader reads the delimiter off the header line outside
 * quotes, so a name holding `;`, `|` or a tab must not be taken for one.
 */
function headerLine(names: string[]): string {
  return `${names.map((n) => `"${n.replace(/"/g, '""')}"`).join(',')}\n`;
}

/** Counts the rows that pass; in a file of one column a missing value becomes an empty string (quoted when written). */
function counter(
  oneColumn: boolean,
  mapRow: ((row: StagedValue[]) => StagedValue[]) | undefined,
  seen: (n: number) => void,
): Transform {
  let n = 0;
  return new Transform({
    objectMode: true,
    transform(raw: StagedValue[], _enc, done: TransformCallback) {
      let row: StagedValue[];
      try {
        row = mapRow ? mapRow(raw) : raw;
      } catch (err) {
        done(err as Error);
        return;
      }
      n += 1;
      seen(n);
      done(null, oneColumn && row[0] === null ? [''] : row);
    },
  });
}

/**
 * Streams `rows` (arrays of StagedValue, one per column) into the staged file as CSV, with backpressure
 * from the file back to `rows`. Resolves with the number of rows written once the file is flushed and
 * closed. On any failure (a driver error in `rows`, a full disk, `signal`) the file is removed; an
 * aborted signal rejects at once with its reason (the caller cancels the work feeding `rows`), other
 * failures reject with the error as thrown, for the caller to name.
 */
export async function writeCsv(
  file: string,
  names: string[],
  rows: Readable,
  signal: AbortSignal,
  /** Turns each row as read into the row as written (and sees it go by, for a cursor's maximum). */
  mapRow?: (row: StagedValue[]) => StagedValue[],
  /**
   * Rejects when the driver knows the read is lost although `rows` may never say so (a stream whose
   * destroy waits on a connection that is gone): the write stops and the file goes as for any failure.
   */
  lost?: Promise<never>,
): Promise<number> {
  let count = 0;
  // A one-column row with no value would be an empty line, which is no record at all: it is written `""`,
  // which the loader reads as missing, as it reads an empty field.
  const oneColumn = names.length === 1;
  await stage(
    file,
    names,
    rows,
    () => [
      counter(oneColumn, mapRow, (n) => {
        count = n;
      }),
      stringify({ eof: true, record_delimiter: 'unix', quoted_empty: oneColumn }),
    ],
    signal,
    lost,
  );
  return count;
}

/**
 * Streams CSV records the database wrote itself (PostgreSQL's COPY … TO STDOUT, no header) into the
 * staged file after the header, bytes as they come: no value is handled in JS. `seen` gets each chunk
 * (to count lines for progress). Failures as writeCsv's.
 */
export async function writeCsvRecords(
  file: string,
  names: string[],
  records: Readable,
  signal: AbortSignal,
  seen: (chunk: Buffer) => void,
  lost?: Promise<never>,
): Promise<void> {
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      seen(chunk);
      done(null, chunk);
    },
  });
  await stage(file, names, records, () => [tap], signal, lost);
}

/** The staged file: created (0600), the header, then `source` through `middle()` into it; removed on any failure. */
async function stage(
  file: string,
  names: string[],
  source: Readable,
  middle: () => Transform[],
  signal: AbortSignal,
  lost: Promise<never> | undefined,
): Promise<void> {
  if (signal.aborted) throw abortReason(signal);
  const fd = createStagedFile(file);
  let out: Writable | undefined;
  const onAbort = () => {
    source.destroy();
    out?.destroy();
  };
  let fail: (() => void) | undefined;
  try {
    fs.writeSync(fd, headerLine(names));
    out = fs.createWriteStream('', { fd, autoClose: true });
    const aborted = new Promise<never>((_, reject) => {
      fail = () => {
        onAbort();
        reject(abortReason(signal));
      };
      if (signal.aborted) fail();
      else signal.addEventListener('abort', fail, { once: true });
    });
    const written = pipeline([source, ...middle(), out]);
    // A pipeline that fails after the abort already answered must not surface as an unhandled rejection.
    written.catch(() => undefined);
    await Promise.race([written, aborted, ...(lost ? [lost] : [])]);
  } catch (err) {
    onAbort();
    if (!out) fs.closeSync(fd);
    removeStagedFile(file);
    throw err;
  } finally {
    if (fail) signal.removeEventListener('abort', fail);
  }
}

/** A timestamp's text as the loader reads it exactly, whatever its machine's time zone. */
const TIMESTAMP_TEXT = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:\+00(?::?00)?|Z)?$/;

/**
 * `2001-02-03 04:05:06.123456+00` (an instant printed in UTC) or `2001-02-03 04:05:06` (a wall-clock
 * time) as `2001-02-03T04:05:06.123456Z`. The loader reads text with a zone as the instant it names and
 * stores its UTC wall time; text without one it reads in its own machine's time zone whenever a value has
 * fractions, so a wall-clock time is written with `Z` too and is stored as the same wall time. Text of
 * another shape (infinity, a year before 1 or past 9999) is left as the database printed it, for the
 * loader to refuse that row naming the value rather than store another.
 */
export function timestampText(text: string): string {
  const m = TIMESTAMP_TEXT.exec(text);
  if (!m) return text;
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(6, '0')}Z`;
}

/** Bytes as text: `\x` and hex digits, as PostgreSQL prints bytea. */
export function bytesText(bytes: Uint8Array): string {
  return `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/** A SQL identifier, possibly qualified (`schema.table`), each part quoted with `quote` (doubled inside). */
export function qualifiedName(table: string, quote: '"' | '`'): string {
  const parts = table.split('.');
  if (parts.length > 2 || parts.some((p) => p.trim() === ''))
    throw AppError.invalid(`table "${table}" is not a table name: give "name" or "schema.name"`);
  return parts.map((p) => `${quote}${p.split(quote).join(quote + quote)}${quote}`).join('.');
}

/** The spec's SELECT: its query (trailing semicolons and blanks dropped), or every column of its table. */
export function sourceQuery(spec: SourceSpec, quote: '"' | '`'): string {
  const hasQuery = typeof spec.query === 'string' && spec.query.trim() !== '';
  const hasTable = typeof spec.table === 'string' && spec.table.trim() !== '';
  if (hasQuery === hasTable) throw AppError.invalid('A source names either a query or a table, and only one');
  if (hasTable) return `SELECT * FROM ${qualifiedName(spec.table as string, quote)}`;
  return (spec.query as string).replace(/[\s;]+$/, '');
}

/** Column names a CSV header can carry: each once, none blank. */
export function checkColumnNames(names: string[]): void {
  if (names.length === 0) throw AppError.invalid('The source query returns no columns');
  const seen = new Set<string>();
  for (const n of names) {
    if (n.trim() === '') throw AppError.invalid('The source query returns a column without a name: name it with AS');
    if (seen.has(n))
      throw AppError.invalid(`The source query returns two columns named "${n}": give each column its own name`);
    seen.add(n);
  }
}

/** The cursor column's position among the columns, or a clear refusal. */
export function cursorIndex(names: string[], column: string): number {
  const at = names.indexOf(column);
  if (at < 0)
    throw AppError.invalid(
      `The cursor column "${column}" is not among the columns the source returns (${names.map((n) => `"${n}"`).join(', ')})`,
    );
  return at;
}

/** A database connection's parts, from either form of SourceConnection. */
export interface DatabaseTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string;
  ssl: boolean;
}

/**
 * `{host, port?, database, user, password?, ssl?}`, or `{url}` as `scheme://user:password@host:port/database`
 * (`?ssl=true` or `?sslmode=require` for TLS). A URL's parts are percent-decoded.
 */
export function databaseTarget(
  connection: SourceConnection,
  schemes: string[],
  defaultPort: number,
  kind: string,
): DatabaseTarget {
  if ('url' in connection) {
    let url: URL;
    try {
      url = new URL(connection.url);
    } catch {
      throw AppError.invalid(`The ${kind} source's connection URL does not parse`);
    }
    if (!schemes.includes(url.protocol.replace(/:$/, '')))
      throw AppError.invalid(
        `A ${kind} connection URL starts with ${schemes.map((s) => `${s}://`).join(' or ')}, not ${url.protocol}//`,
      );
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        throw AppError.invalid(`The ${kind} source's connection URL has a badly escaped part`);
      }
    };
    const sslmode = url.searchParams.get('sslmode');
    const ssl = url.searchParams.get('ssl') === 'true' || (sslmode !== null && sslmode !== 'disable');
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : defaultPort,
      database: decode(url.pathname.replace(/^\//, '')),
      user: decode(url.username),
      password: url.password ? decode(url.password) : undefined,
      ssl,
    };
  }
  const { host, port, database, user, password, ssl } = connection;
  if (typeof host !== 'string' || host === '') throw AppError.invalid(`A ${kind} source needs connection.host`);
  if (typeof user !== 'string' || user === '') throw AppError.invalid(`A ${kind} source needs connection.user`);
  if (typeof database !== 'string' || database === '')
    throw AppError.invalid(`A ${kind} source needs connection.database`);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535))
    throw AppError.invalid(`connection.port must be a port number (1-65535), not ${String(port)}`);
  return { host, port: port ?? defaultPort, database, user, password, ssl: ssl === true };
}

/** An address the host policy checked for a target's host. */
export interface CheckedAddress {
  address: string;
  family: number;
}

/**
 * The host check a reader makes before it connects: a host the policy refuses is never dialled, and one it
 * admits is dialled at the addresses it answers (pinnedLookup), never at a second DNS answer.
 */
export type HostAllowed = (target: URL) => Promise<readonly CheckedAddress[]>;

/**
 * A `lookup` for net/tls connects that answers with the checked addresses only. Without it the driver asks
 * DNS again when it dials, and a name whose answer changes in between (DNS rebinding: public when checked,
 * 127.0.0.1 or 169.254.169.254 when dialled) would reach what the policy refused.
 */
export function pinnedLookup(addresses: readonly CheckedAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
    const usable = addresses.filter((a) => wanted === undefined || a.family === wanted);
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`${hostname} has no checked address of family ${wanted}`);
      err.code = 'ENOTFOUND';
      callback(err, '', 0);
      return;
    }
    if (options.all)
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, usable[0]!.address, usable[0]!.family);
  };
}

/** The URL a host policy judges for a database target (`postgres://host:5432`). */
export function targetUrl(scheme: string, target: DatabaseTarget): URL {
  if (target.host.startsWith('/'))
    throw AppError.forbidden('A source host must be a name or an address, not a socket path');
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  try {
    return new URL(`${scheme}://${host}:${target.port}`);
  } catch {
    throw AppError.invalid(`connection.host "${target.host}" is not a host name or address`);
  }
}

/** Text with every occurrence of the secret replaced: a driver's message never carries the password out. */
export function withoutSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('***');
}

/** A duration for messages: `10 s`, or `500 ms` below a second. */
export function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

/** Waits up to `ms` for `p`, never rejecting: a close that hangs must not hold the answer. */
export async function settleWithin(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((r) => {
      timer = setTimeout(r, ms);
    }),
  ]);
  clearTimeout(timer);
}

import type { LookupFunction } from 'node:net';
import { AppError, abortReason } from '@quarry/errors';
import type { SourceColumn, SourceRead, SourceSpec } from '../ports/source-reader.port';
import {
  databaseTarget,
  duration,
  pinnedLookup,
  removeStagedFile,
  settleWithin,
  sourceQuery,
  targetUrl,
  withoutSecret,
  type DatabaseTarget,
  type HostAllowed,
} from './source-staging';

/*
 * What the database source readers (PostgreSQL, MySQL/MariaDB) share around their driver: the read's
 * frame (the target checked by the host policy before it is dialled, and dialled at the addresses checked;
 * an abort that cancels the statement; the staged file gone on any failure; the connection closed whatever
 * happens), the login bounded in time, a connection lost mid-read failing the write, and a driver's error named as the AppError a caller
 * can act on (the driver's own codes first, then what every driver says alike).
 */

/** Where a read is: logging in, running the session's and describe's statements, or streaming rows. */
export type ReadStage = 'connect' | 'query' | 'read';

/** A read under way, as the frame and the error mapping see it. */
export interface ReadProgress {
  stage: ReadStage;
  /** Rows read so far. */
  rows: number;
  /** The file is written: a failure from here on (COMMIT) must remove it too. */
  written: boolean;
}

/** A database source's target, checked by the host policy; refuses a spec of another kind. */
export async function checkedTarget(
  spec: SourceSpec,
  db: { kind: 'postgres' | 'mysql'; reader: string; schemes: string[]; port: number; quote: '"' | '`' },
  hostAllowed: HostAllowed | undefined,
  signal: AbortSignal,
): Promise<{ target: DatabaseTarget; sql: string; lookup: LookupFunction | undefined }> {
  if (spec.kind !== db.kind) throw AppError.invalid(`${db.reader} reads ${db.kind} sources, not ${spec.kind}`);
  const target = databaseTarget(spec.connection, db.schemes, db.port, db.kind);
  const sql = sourceQuery(spec, db.quote);
  const addresses = hostAllowed ? await hostAllowed(targetUrl(db.kind, target)) : undefined;
  if (signal.aborted) throw abortReason(signal);
  return { target, sql, lookup: addresses ? pinnedLookup(addresses) : undefined };
}

/**
 * Runs `read` with the frame every database read has: on abort `cancel` stops the statement on the server
 * (waited for up to cancelWithinMs afterwards); on failure the staged file goes and the error is the
 * abort's reason or `explain`'s; `close` always runs last.
 */
export async function framedRead(options: {
  file: string;
  signal: AbortSignal;
  read: (progress: ReadProgress) => Promise<SourceRead>;
  cancel: (progress: ReadProgress) => Promise<void> | undefined;
  cancelWithinMs: number;
  explain: (err: unknown, progress: ReadProgress) => AppError;
  close: () => Promise<void>;
}): Promise<SourceRead> {
  const { file, signal } = options;
  const progress: ReadProgress = { stage: 'connect', rows: 0, written: false };
  let cancelled: Promise<void> | undefined;
  const onAbort = () => {
    cancelled = options.cancel(progress);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await options.read(progress);
  } catch (err) {
    if (progress.written) removeStagedFile(file);
    if (signal.aborted) throw abortReason(signal);
    throw options.explain(err, progress);
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (cancelled) await settleWithin(cancelled, options.cancelWithinMs);
    await options.close();
  }
}

/** The read's answer: the staged CSV, its rows, each column typed for the loader (or left to inference). */
export function stagedRead(
  file: string,
  rows: number,
  columns: Array<{ name: string; dbType: string; type: SourceColumn['type'] }>,
  cursorMax: string | undefined,
): SourceRead {
  return {
    file,
    format: 'csv',
    rows,
    columns: columns.map(({ name, dbType, type }) => (type ? { name, dbType, type } : { name, dbType })),
    ...(cursorMax !== undefined ? { cursorMax } : {}),
  };
}

/**
 * A promise that rejects when `watch` says the connection is gone (it calls `reject` from the driver's
 * events), for writeCsv to stop on; never an unhandled rejection.
 */
export function connectionLost(watch: (reject: (err: unknown) => void) => void): Promise<never> {
  const lost = new Promise<never>((_, reject) => watch(reject));
  lost.catch(() => undefined);
  return lost;
}

/** The refusal of a login that took longer than its bound. */
export function loginTimeout(target: DatabaseTarget, ms: number): AppError {
  return AppError.unavailable(
    `The source at ${target.host}:${target.port} did not accept the login within ${duration(ms)}`,
  );
}

/**
 * `connecting` within `ms` or before an abort, whichever is first; on either `giveUp` runs (to cut the
 * half-open connection) and the answer is loginTimeout or the abort's reason.
 */
export async function loginWithin<T>(
  connecting: Promise<T>,
  options: { target: DatabaseTarget; timeoutMs: number; after?: number; signal: AbortSignal; giveUp?: () => void },
): Promise<T> {
  const { signal } = options;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  connecting.catch(() => undefined);
  try {
    return await Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          options.giveUp?.();
          reject(loginTimeout(options.target, options.timeoutMs));
        }, options.after ?? options.timeoutMs);
        onAbort = () => {
          options.giveUp?.();
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** A driver's error as the explaining code sees it, with the messages every driver's mapping shares. */
export class DriverFailure {
  /** The driver's message without the password. */
  readonly message: string;
  readonly code: string;
  /** `host:port`. */
  readonly where: string;

  constructor(
    readonly target: DatabaseTarget,
    readonly progress: ReadProgress,
    readonly connectTimeoutMs: number,
    message: string,
    code: string | undefined,
  ) {
    this.message = withoutSecret(message, target.password);
    this.code = code ?? '';
    this.where = `${target.host}:${target.port}`;
  }

  get connecting(): boolean {
    return this.progress.stage === 'connect';
  }

  /** The connection went away (mid-read: after how many rows). */
  lost(why: string): AppError {
    const { stage, rows } = this.progress;
    return AppError.unavailable(
      `The source closed the connection${stage === 'read' ? ` after ${rows} rows` : ''}: ${why}; nothing was staged`,
    );
  }

  loginRefused(why: string): AppError {
    return AppError.invalid(`The source refused the login for user "${this.target.user}": ${why}`);
  }

  loginTimeout(): AppError {
    return loginTimeout(this.target, this.connectTimeoutMs);
  }

  noDatabase(): AppError {
    return AppError.invalid(`The source at ${this.where} has no database "${this.target.database}"`);
  }

  refusedConnection(): AppError {
    return AppError.invalid(`The source at ${this.where} refused the connection: ${this.message}`);
  }

  busy(): AppError {
    return AppError.unavailable(`The source at ${this.where} refused the connection for now: ${this.message}`);
  }

  writes(): AppError {
    return AppError.invalid(
      `The source query tries to write (${this.message}); a source is read in a read-only transaction`,
    );
  }

  cancelled(): AppError {
    return AppError.timeout(`The source cancelled the query: ${this.message}`);
  }

  noTls(): AppError {
    return AppError.invalid(`The source at ${this.where} does not accept TLS (connection.ssl is true)`);
  }

  unreachable(): AppError {
    return AppError.unavailable(`Cannot reach the source at ${this.where} (${this.code})`);
  }

  /** The server's own error: at login the connection is refused, later the query failed. */
  serverError(): AppError {
    return this.connecting ? this.refusedConnection() : AppError.invalid(`The source query failed: ${this.message}`);
  }
}

/**
 * A driver's error as the AppError a caller can act on: an AppError as it is; else the driver's own
 * mapping (`driver.codes`), what every driver reports alike (refused, unresolved or unreachable hosts),
 * the driver's later checks (`driver.then`), an untrusted certificate, the server's own error
 * (`driver.isServerError`), the driver's last word (`driver.otherwise`), and last a read that failed.
 */
export function explainDriverError(
  err: unknown,
  f: DriverFailure,
  driver: {
    codes: (f: DriverFailure) => AppError | undefined;
    then?: (f: DriverFailure) => AppError | undefined;
    isServerError: boolean;
    otherwise?: (f: DriverFailure) => AppError | undefined;
  },
): AppError {
  if (err instanceof AppError) return err;
  const { code, message, where, target } = f;
  const own = driver.codes(f);
  if (own) return own;
  switch (code) {
    case 'ECONNREFUSED':
      return AppError.unavailable(`Cannot reach the source at ${where}: connection refused`);
    case 'ENOTFOUND':
      return AppError.invalid(`The source host ${target.host} does not resolve`);
    case 'EAI_AGAIN':
      return AppError.unavailable(`The source host ${target.host} could not be resolved now (EAI_AGAIN)`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return f.unreachable();
  }
  const later = driver.then?.(f);
  if (later) return later;
  if (/certificate|self[- ]signed|altname/i.test(message) || /^(ERR_TLS|CERT_|DEPTH_ZERO|UNABLE_TO)/.test(code))
    return AppError.invalid(`The source at ${where} has a TLS certificate this server does not trust: ${message}`);
  if (driver.isServerError) return f.serverError();
  return driver.otherwise?.(f) ?? AppError.unavailable(`Reading the source at ${where} failed: ${message}`);
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { AppError, ERROR_TABLE, quoteInput, quoteList } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { REQUEST_ID_HEADER, resolveRequestId } from '@quarry/rpc';
import type { AuditRecorder } from '../domain/audit-recorder';
import type { AuthenticateUseCase } from '../domain/authenticate.use-case';
import { IdempotentCall } from '../domain/idempotent-call';
import type { IdempotentUpload } from '../domain/idempotent-upload';
import { callerOf, type Principal } from '../domain/principal';
import type { RateLimiter } from '../ports/rate-limiter.port';
import type { RecordUploads, UploadAnswer, UploadFormat, UploadInput } from '../ports/record-uploads.port';
import { refusedForAddress } from './address-limit';
import { setRateLimitHeaders } from './rate-limit-headers';
import { send, sendProblem } from './http-responses';

/** The media types an upload's body may be, and the loader's format for each. */
const FORMATS: Record<string, UploadFormat> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'application/json': 'json',
  'application/x-ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'application/jsonlines': 'jsonl',
  'application/vnd.apache.parquet': 'parquet',
  'application/x-parquet': 'parquet',
};

const PARAMS = new Set(['mode', 'key', 'onError', 'maxErrors']);

export interface UploadDeps {
  authenticate: AuthenticateUseCase;
  uploads: () => RecordUploads | undefined;
  log: Logger;
  /** QUARRY_UPLOAD_MAX_MB in bytes, counted on what arrives (the ingest service counts it inflated too). */
  maxBytes: number;
  /** A body that sends nothing for this long is given up (QUARRY_BODY_TIMEOUT_MS): a stalled client holds nothing. */
  idleMs: number;
  rateLimiter?: RateLimiter;
  addressLimiter?: RateLimiter;
  audit?: AuditRecorder;
  /** Keeps uploads under an Idempotency-Key header (docs/uploads.md); absent, the header is checked and ignored. */
  idempotency?: IdempotentUpload;
}

/** The upload's parameters from its URL and headers; what is wrong is said before a byte is read. */
export function uploadInput(
  index: string,
  query: Record<string, unknown>,
  headers: IncomingMessage['headers'],
): UploadInput {
  const unknown = Object.keys(query).filter((k) => !PARAMS.has(k));
  if (unknown.length)
    throw AppError.invalid(`Unknown parameter ${quoteList(unknown)}; an upload takes mode, key, onError and maxErrors`);
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw AppError.invalid(`${name} is given once, as text`);
    return v;
  };
  const mode = one('mode') ?? 'replace';
  if (mode !== 'replace' && mode !== 'append' && mode !== 'upsert')
    throw AppError.invalid(`mode must be replace, append or upsert, got ${quoteInput(mode)}`);
  const onError = one('onError') ?? 'fail';
  if (onError !== 'fail' && onError !== 'skip')
    throw AppError.invalid(`onError must be fail or skip, got ${quoteInput(onError)}`);
  const maxErrorsText = one('maxErrors');
  let maxErrors: number | undefined;
  if (maxErrorsText !== undefined) {
    if (!/^\d{1,15}$/.test(maxErrorsText))
      throw AppError.invalid(`maxErrors must be a whole number, got ${quoteInput(maxErrorsText)}`);
    maxErrors = Number(maxErrorsText);
  }
  const key = one('key');
  const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const format = FORMATS[type];
  if (!format)
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type must be text/csv, application/json, application/x-ndjson or application/vnd.apache.parquet${type ? `, got ${quoteInput(type)}` : ''}`,
    );
  const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip')
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding must be gzip or absent, got ${quoteInput(encoding)}`,
    );
  return {
    index,
    mode,
    ...(key !== undefined ? { key } : {}),
    onError,
    ...(maxErrors !== undefined ? { maxErrors } : {}),
    format,
    gzip: encoding === 'gzip',
  };
}

/**
 * The request's body as it arrives, piece by piece (never whole), failing past `maxBytes` with 413 and
 * with 408 when the client sends nothing for `idleMs` while a piece is awaited. Only the client's silence
 * counts: while the ingest service holds the body back (it writes to disk at its own pace), no piece is
 * asked for and no clock runs.
 */
async function* bodyOf(req: IncomingMessage, maxBytes: number, idleMs: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  const pieces = req[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(new AppError('REQUEST_TIMEOUT', `The upload sent nothing for ${idleMs / 1000} s; it was given up`)),
        idleMs,
      );
    });
    let next: IteratorResult<Buffer>;
    try {
      next = await Promise.race([pieces.next(), idle]);
    } catch (err) {
      // The client closed the connection mid-body: its own doing, said so (not a fault of Quarry's).
      if (err instanceof AppError) throw err;
      throw new AppError('REQUEST_TIMEOUT', 'The client went away before its upload had arrived');
    } finally {
      clearTimeout(timer);
    }
    if (next.done) return;
    total += next.value.length;
    if (total > maxBytes)
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `The upload exceeds QUARRY_UPLOAD_MAX_MB (${Math.floor(maxBytes / 1_048_576)} MB); nothing was published`,
      );
    yield next.value;
  }
}

function sendOutcome(res: ServerResponse, answer: UploadAnswer): void {
  const { failure, ...accounting } = answer;
  if (!failure) return send(res, 200, 'application/json; charset=utf-8', accounting);
  const row = ERROR_TABLE[failure.code];
  send(res, row.http, 'application/problem+json', {
    type: 'about:blank',
    title: row.title,
    status: row.http,
    detail: failure.detail,
    ...accounting,
  });
}

/**
 * POST /indexes/<name>/records: the body is a file (CSV, JSON, JSON Lines, Parquet; gzip accepted),
 * streamed to the ingest service, which loads it and publishes one version or nothing. A token with
 * `indexes:write`, never an embed token; its owner must be an admin or the index's owner (the service
 * decides, under the index's load lock).
 */
export function uploadRecordsHandler(deps: UploadDeps): RequestHandler {
  return (req, res) => {
    const started = Date.now();
    const requestId = resolveRequestId(req.headers[REQUEST_ID_HEADER]);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const log = deps.log.child({ requestId, route: 'upload' });
    let principal: Principal | undefined;
    const index = String(req.params.name ?? '');
    const finish = (outcome: string, returned: number | null) => {
      if (!principal || !deps.audit) return;
      deps.audit.record({
        time: new Date(started).toISOString(),
        userId: principal.user.id,
        userName: principal.user.name,
        tokenId: principal.tokenId,
        embedId: null,
        method: 'INDEXES.UPLOAD',
        index,
        paramsDigest: null,
        outcome,
        durationMs: Date.now() - started,
        returned,
        requestId,
      });
    };
    // What was not read of a refused body is not waited for: the connection closes after the answer.
    const refuse = (err: AppError) => {
      if (!req.complete) res.setHeader('Connection', 'close');
      sendProblem(res, err);
      finish(String(err.httpStatus), null);
    };
    void (async () => {
      const auth = await deps.authenticate.authenticate(req.headers.authorization);
      if (!auth.ok) {
        if (await refusedForAddress(deps.addressLimiter, req, res)) return;
        res.setHeader('Connection', 'close');
        return sendProblem(res, auth.error);
      }
      principal = auth.principal;
      if (principal.embed) return refuse(AppError.forbidden('An embed token cannot write an index'));
      if (!principal.scopes.has('indexes:write'))
        return refuse(AppError.forbidden('Writing an index needs a token with the indexes:write scope'));
      if (deps.rateLimiter) {
        const taken = await deps.rateLimiter.take(principal.tokenId);
        setRateLimitHeaders(res, deps.rateLimiter, taken.state);
        if (!taken.ok)
          return refuse(
            new AppError('RATE_LIMITED', `Rate limit exceeded; retry after ${taken.retryAfterSeconds} s`, {
              retryAfterSeconds: taken.retryAfterSeconds,
            }),
          );
      }
      const uploads = deps.uploads();
      if (!uploads) return refuse(AppError.unavailable('Uploads are not enabled on this gateway'));
      const input = uploadInput(index, req.query as Record<string, unknown>, req.headers);
      // Node joins a repeated header with ", ", which no key may hold: two keys are refused as malformed.
      const header = req.headers['idempotency-key'];
      const idempotencyKey = Array.isArray(header) ? header.join(', ') : header;
      if (idempotencyKey !== undefined) IdempotentCall.checkKey(idempotencyKey);
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > deps.maxBytes)
        return refuse(
          new AppError(
            'PAYLOAD_TOO_LARGE',
            `The upload is ${declared} bytes, more than QUARRY_UPLOAD_MAX_MB (${Math.floor(deps.maxBytes / 1_048_576)} MB); nothing was read`,
          ),
        );
      // A client that goes away cancels the load: what it would not hear of is not published (a build under
      // way finishes, and is thrown away).
      const gone = new AbortController();
      const onClose = () => {
        if (!res.writableEnded) gone.abort(AppError.timeout('The client went away before the upload was answered'));
      };
      res.once('close', onClose);
      try {
        const load = (body: AsyncIterable<Uint8Array>) =>
          uploads.upload(callerOf(principal!), input, body, { requestId }, gone.signal);
        const body = bodyOf(req, deps.maxBytes, deps.idleMs);
        const answer =
          idempotencyKey !== undefined && deps.idempotency
            ? await deps.idempotency.run(principal, idempotencyKey, input, body, load)
            : await load(body);
        // A client gone after its load published still leaves the publish in the audit trail.
        if (gone.signal.aborted) {
          finish(
            answer.failure ? String(ERROR_TABLE[answer.failure.code].http) : 'ok',
            answer.failure ? null : answer.loaded,
          );
          return;
        }
        if (answer.failure && !req.complete) res.setHeader('Connection', 'close');
        sendOutcome(res, answer);
        finish(
          answer.failure ? String(ERROR_TABLE[answer.failure.code].http) : 'ok',
          answer.failure ? null : answer.loaded,
        );
        log.info(
          {
            index,
            version: answer.version,
            rowsRead: answer.rowsRead,
            rejected: answer.rejected,
            failure: answer.failure?.code,
          },
          answer.failure ? 'upload failed; nothing published' : 'upload published',
        );
      } finally {
        res.off('close', onClose);
      }
    })().catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      if (err instanceof AppError && err.code !== 'INTERNAL') return refuse(err);
      log.error({ err }, 'upload failed');
      refuse(AppError.internal('The upload failed'));
    });
  };
}

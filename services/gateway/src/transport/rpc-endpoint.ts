import type { IncomingMessage, ServerResponse } from 'node:http';
import { DISCOVER_METHOD, type MethodName } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { REQUEST_ID_HEADER, resolveRequestId } from '@quarry/rpc';
import { extractTraceContext, failSpan, inSpan, SpanKind, tracingEnabled, type Span } from '@quarry/tracing';
import type { AuthenticateUseCase } from '../domain/authenticate.use-case';
import type { DispatchMethodUseCase } from '../domain/dispatch-method.use-case';
import type { Principal } from '../domain/principal';
import { isIdempotentCall, type IdempotentCall } from '../domain/idempotent-call';
import type { RateLimiter } from '../ports/rate-limiter.port';
import type { CorsPolicy } from './cors';
import { sendNoContent, sendProtocolError } from './http-responses';
import { PROTOCOL, type Envelope } from './json-rpc-envelope';
import { sendDiscover } from './openrpc-discover';
import { readRequest, type BodyLimits, type RequestReadResult } from './read-request';
import { answerError, answerResult } from './rpc-answers';
import { RpcCallRecord, type CallSinks } from './rpc-call-record';
import { answerUnauthenticated, refusedAsRevoked, refusedByRateLimit } from './rpc-refusals';

/** What POST /api/v1 needs. */
export interface RpcEndpointDeps extends BodyLimits, CallSinks {
  authenticate: AuthenticateUseCase;
  dispatch: DispatchMethodUseCase;
  log: Logger;
  /** Per-token limits (QUARRY_RATE_LIMIT); none when absent. */
  rateLimiter?: RateLimiter;
  /** Per client address, for calls without a valid token (QUARRY_ANON_RATE_LIMIT); none when absent. */
  addressLimiter?: RateLimiter;
  cors?: CorsPolicy;
  /** The Idempotency-Key header on calls that create something; ignored when absent. */
  idempotency?: IdempotentCall;
}

/**
 * The JSON-RPC endpoint. Also mounted straight on the HTTP server (see GatewayModule) so the hot path
 * skips Express's router; Express keeps every other route.
 */
export function rpcHandler(deps: RpcEndpointDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const run = (span?: Span) =>
      handleRpc(deps, req, res, span).catch((err: unknown) => {
        failSpan(span, err, SpanKind.SERVER);
        deps.log.error({ err }, 'unhandled gateway failure');
        if (!res.headersSent) sendProtocolError(res, 500, null, PROTOCOL.internal, 'Internal error');
      });
    if (!tracingEnabled()) {
      void run();
      return;
    }
    // One trace per call: this span is its root (or continues the client's own trace when the request
    // carries a W3C traceparent), and every gRPC call, service span and chart job hangs below it.
    const parent = extractTraceContext((key) => {
      const value = req.headers[key];
      return typeof value === 'string' ? value : undefined;
    });
    void inSpan(
      'POST /api/v1',
      {
        kind: SpanKind.SERVER,
        parent,
        attributes: { 'rpc.system': 'jsonrpc', 'http.request.method': 'POST', 'url.path': '/api/v1' },
      },
      async (span) => {
        await run(span);
        // A client that went away before its body was read got no answer at all.
        if (res.headersSent) span?.setAttribute('http.response.status_code', res.statusCode);
      },
    );
  };
}

/**
 * One call, step by step: framing, authentication, the rate limit, the request read, then discovery or
 * the revocation check and the dispatch. A step that refuses answers and records the call itself.
 */
async function handleRpc(
  deps: RpcEndpointDeps,
  req: IncomingMessage,
  res: ServerResponse,
  span: Span | undefined,
): Promise<void> {
  const call = beginCall(deps, req, res, span);
  const auth = await deps.authenticate.authenticate(req.headers.authorization);
  if (!auth.ok) return answerUnauthenticated(deps, req, res, call, auth);
  const principal = auth.principal;
  call.identify(principal);
  if (await refusedByRateLimit(deps, req, res, call, principal)) return;
  const read = await readRequest(deps, req);
  if ('aborted' in read) return;
  if (!read.ok) return answerUnreadable(res, call, read);
  const { envelope } = read;
  noteEnvelope(call, envelope, principal);
  if (envelope.method === DISCOVER_METHOD) return answerDiscover(req, res, call, envelope);
  if (refusedAsRevoked(deps.authenticate, res, call, principal, envelope.method)) return;
  await dispatch(deps, res, call, principal, envelope, envelope.method, req.headers['idempotency-key']);
}

/** The framing every answer carries: the request id (echoed), CORS, and the call's record. */
export function beginCall(
  deps: Pick<RpcEndpointDeps, 'cors' | 'metrics' | 'audit'>,
  req: IncomingMessage,
  res: ServerResponse,
  span: Span | undefined,
): RpcCallRecord {
  const started = process.hrtime.bigint();
  const requestId = resolveRequestId(req.headers[REQUEST_ID_HEADER]);
  span?.setAttribute('quarry.request_id', requestId);
  res.setHeader('X-Request-Id', requestId);
  deps.cors?.apply(req, res);
  // No child logger per request on the hot path: every line names the request id itself.
  return new RpcCallRecord(started, requestId, deps, span);
}

/** Wrong content type, too big, too slow, not JSON, not a JSON-RPC request: its protocol answer. */
function answerUnreadable(
  res: ServerResponse,
  call: RpcCallRecord,
  read: Extract<RequestReadResult, { send: unknown }>,
): void {
  call.span?.setAttribute('error.type', String(read.code));
  read.send(res);
  call.finish(read.label, String(read.code));
}

type Request = Extract<Envelope, { ok: true }>;

/** The header's one value; sent twice it is no key (a 400 names it). */
function oneKey(value: string | string[]): string {
  return Array.isArray(value) ? (value.length === 1 ? value[0]! : '') : value;
}

function noteEnvelope(call: RpcCallRecord, envelope: Request, principal: Principal): void {
  if (call.span && envelope.id !== null && !envelope.notification)
    call.span.setAttribute('rpc.jsonrpc.request_id', String(envelope.id));
  call.describe(envelope.method, envelope.params, principal);
}

function answerDiscover(req: IncomingMessage, res: ServerResponse, call: RpcCallRecord, envelope: Request): void {
  if (envelope.notification) sendNoContent(res);
  else sendDiscover(req, res, envelope.id);
  call.finish(DISCOVER_METHOD, 'ok');
}

/** Calls that only read, and may stop when their caller has gone: a call that saves or creates goes on. */
const READS: ReadonlySet<string> = new Set(['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE', 'REPORTS.EXECUTE']);
function cancellable(method: MethodName, params: Record<string, unknown>): boolean {
  return READS.has(method) && params.saveReport === undefined;
}

/** The method through the dispatch pipeline, and its result or its error as the answer. */
async function dispatch(
  deps: RpcEndpointDeps,
  res: ServerResponse,
  call: RpcCallRecord,
  principal: Principal,
  request: Request,
  method: MethodName,
  idempotencyKey: string | string[] | undefined,
): Promise<void> {
  // A caller who goes away before its answer cancels the work done for it (a crosstab's DuckDB statement
  // is interrupted), unless identical calls of others share it.
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableEnded) gone.abort(AppError.timeout('The client went away before its answer'));
  };
  res.once('close', onClose);
  try {
    const trace = {
      requestId: call.requestId,
      ...(cancellable(method, request.params) ? { signal: gone.signal } : {}),
    };
    const exec = () => deps.dispatch.call(principal, method, request.params, trace);
    const keyed = idempotencyKey !== undefined && deps.idempotency && isIdempotentCall(method, request.params);
    const result = keyed
      ? await deps.idempotency!.run(principal, oneKey(idempotencyKey), method, request.params, exec)
      : await exec();
    answerResult(deps.log, res, call, request, result);
  } catch (err) {
    answerError(deps.log, res, call, request, err);
  } finally {
    res.off('close', onClose);
  }
}

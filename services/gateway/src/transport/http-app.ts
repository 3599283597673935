import { mcpHandler, type McpDeps } from './mcp-endpoint';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { AppError, ERROR_TABLE, isAppError, toJsonRpcBusinessError } from '@quarry/errors';
import { API_VERSION, DISCOVER_METHOD, INDEX_NAME, openRpcDocument, type OpenRpcDocument } from '@quarry/contract';
import type { Logger } from '@quarry/logger';
import type { QuarryMetrics } from '@quarry/metrics';
import { REQUEST_ID_HEADER, resolveRequestId } from '@quarry/rpc';
import { extractTraceContext, failSpan, inSpan, SpanKind, tracingEnabled, type Span } from '@quarry/tracing';
import { AUTH_FAILURES, type AuthenticateUseCase, type Identified } from '../domain/authenticate.use-case';
import { paramsDigest, type AuditRecorder } from '../domain/audit-recorder';
import type { CallMethodUseCase } from '../domain/call-method.use-case';
import type { Principal } from '../domain/principal';
import type { RateLimiter } from '../ports/rate-limiter.port';
import type { CorsPolicy } from './cors';
import { PROTOCOL, readEnvelope, type Envelope, type JsonRpcId, type ProtocolError } from './json-rpc-envelope';
import { mountConsole } from './console-static';
import { discardRest, readBody } from './read-body';
import { resultJson } from './result-json';

export interface HttpAppDeps {
  authenticate: AuthenticateUseCase;
  callMethod: CallMethodUseCase;
  /** Rejects when a store this process needs cannot be reached. */
  checkReady: () => Promise<void>;
  /** Rejects when this process cannot do its work even after a restart-free wait (liveness). */
  checkLive?: () => Promise<void>;
  /** What this process serves without: optional stores that are away (named on the ops port's /readyz). */
  degraded?: () => Promise<string[]>;
  log: Logger;
  bodyLimitBytes: number;
  /** An authenticated call's body must have arrived within this (QUARRY_BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
  metrics?: QuarryMetrics;
  /** The built console's folder (apps/console/dist), served at /console. */
  consoleDir?: string;
  /** Per-token limits (QUARRY_RATE_LIMIT); none when absent. */
  rateLimiter?: RateLimiter;
  /** Per client address, for calls without a valid token (QUARRY_ANON_RATE_LIMIT); none when absent. */
  addressLimiter?: RateLimiter;
  /** The audit trail of every call. */
  audit?: AuditRecorder;
  cors?: CorsPolicy;
  /** MCP at /mcp (Streamable HTTP): the contract's methods as tools, on the same tokens. */
  mcp?: McpDeps;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const utf8 = new TextDecoder('utf-8', { fatal: true });

function send(res: ServerResponse, status: number, contentType: string, body: unknown): void {
  sendText(res, status, contentType, JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

/** A notification's answer (JSON-RPC 2.0 §4.1): the call ran, or failed, and nothing is returned. */
function sendNoContent(res: ServerResponse): void {
  res.writeHead(204, { 'Cache-Control': 'no-store' });
  res.end();
}

function sendProtocolError(
  res: ServerResponse,
  status: number,
  id: JsonRpcId,
  error: ProtocolError,
  detail: string,
): void {
  send(res, status, JSON_TYPE, {
    jsonrpc: '2.0',
    id,
    error: { code: error.code, message: error.message, data: { type: 'about:blank', detail } },
  });
}

/**
 * RFC 7807 body: authentication failures, rate limits and slow bodies answer outside the JSON-RPC
 * envelope (docs/api.md "Error codes").
 */
function sendProblem(res: ServerResponse, err: AppError): void {
  const row = ERROR_TABLE[err.code];
  if (row.http === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="quarry", error="invalid_token"');
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.ceil(err.retryAfterSeconds)));
  send(res, row.http, 'application/problem+json', {
    type: 'about:blank',
    title: row.title,
    status: row.http,
    detail: err.detail,
  });
}

let document: OpenRpcDocument | undefined;
const HOST = /^[A-Za-z0-9.-]{1,253}(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](?::\d{1,5})?$/;

/**
 * The contract is fixed for the life of the process, so the document is built once; only the server URL
 * follows the Host the caller used (OpenRPC wants it absolute), and a Host that is not a host name is
 * not echoed.
 */
function discoverDocument(req: IncomingMessage): OpenRpcDocument {
  document ??= openRpcDocument({ serverUrl: 'http://localhost/api/v1', version: API_VERSION });
  const host = req.headers.host;
  const secure = req.headers['x-forwarded-proto'] === 'https';
  const url = `${secure ? 'https' : 'http'}://${host && HOST.test(host) ? host : 'localhost'}/api/v1`;
  return { ...document, servers: [{ name: 'Quarry', url }] };
}

function sendDiscover(req: IncomingMessage, res: ServerResponse, id: JsonRpcId): void {
  send(res, 200, JSON_TYPE, { jsonrpc: '2.0', id, result: discoverDocument(req) });
}

function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** What /healthz, /readyz and /metrics of the ops port need. */
export interface OpsDeps {
  checkReady: () => Promise<void>;
  checkLive?: () => Promise<void>;
  degraded?: () => Promise<string[]>;
  log: Logger;
  scrape?: () => Promise<{ contentType: string; text: string }>;
  /** Say why /readyz fails in the words of any error (an internal port); else AppError details only. */
  readyDetails?: boolean;
}

/**
 * The probes, one implementation for the API port and the ops port. On the API port (`details` off) they
 * say up or down and nothing else: the cause is logged, and the ops port (loopback by default) tells it.
 */
function mountProbes(
  app: express.Express,
  deps: Pick<OpsDeps, 'checkReady' | 'checkLive' | 'degraded' | 'log' | 'readyDetails'>,
  details: boolean,
): void {
  const cause = (err: unknown) =>
    isAppError(err) ? err.detail : deps.readyDetails && err instanceof Error ? err.message : 'a store is unreachable';
  app.get('/healthz', async (_req, res) => {
    try {
      await deps.checkLive?.();
      send(res, 200, JSON_TYPE, { status: 'ok' });
    } catch (err) {
      deps.log.error({ err }, 'not live');
      send(res, 503, JSON_TYPE, details ? { status: 'not live', detail: cause(err) } : { status: 'not live' });
    }
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.checkReady();
      const degraded = details ? ((await deps.degraded?.()) ?? []) : [];
      send(res, 200, JSON_TYPE, degraded.length ? { status: 'ready', degraded } : { status: 'ready' });
    } catch (err) {
      deps.log.warn({ err }, 'not ready');
      if (!details) return send(res, 503, JSON_TYPE, { status: 'not ready' });
      send(res, 503, JSON_TYPE, { status: 'not ready', detail: cause(err) });
    }
  });
}

/** The probes with their causes, and the Prometheus endpoint: the ops port's routes. */
function mountOpsRoutes(app: express.Express, deps: OpsDeps): void {
  mountProbes(app, deps, true);
  app.get('/metrics', async (_req, res) => {
    if (!deps.scrape) {
      send(res, 404, 'application/problem+json', {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'metrics are not enabled',
      });
      return;
    }
    try {
      const { contentType, text } = await deps.scrape();
      res.writeHead(200, { 'Content-Type': contentType });
      res.end(text);
    } catch (err) {
      deps.log.warn({ err }, 'metrics scrape failed');
      send(res, 503, 'application/problem+json', {
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail: 'metrics are unavailable',
      });
    }
  });
}

function notFound(req: express.Request, res: express.Response): void {
  send(res, 404, 'application/problem+json', {
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    detail: `No route for ${req.method} ${req.path}`,
  });
}

/** QUARRY_OPS_PORT (Kubernetes probes, Prometheus): never the API's port, loopback unless configured. */
export function createOpsApp(deps: OpsDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  mountOpsRoutes(app, deps);
  app.use(notFound);
  return app;
}

export function createHttpApp(deps: HttpAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  // /metrics is the ops port's alone (issue #27): it tells call counts and timings per method.
  mountProbes(app, deps, false);
  app.get('/openrpc.json', (req, res) => send(res, 200, JSON_TYPE, discoverDocument(req)));
  mountConsole(app, deps.consoleDir);
  app.post('/api/v1', rpcHandler(deps));
  if (deps.mcp) app.all('/mcp', mcpHandler(deps.mcp));

  app.all('/api/v1', (_req, res) => {
    res.setHeader('Allow', 'POST');
    send(res, 405, 'application/problem+json', {
      type: 'about:blank',
      title: 'Method Not Allowed',
      status: 405,
      detail: 'Use POST /api/v1',
    });
  });
  app.use(notFound);
  return app;
}

/**
 * The JSON-RPC endpoint. Also mounted straight on the HTTP server (see GatewayModule) so the hot path
 * skips Express's router; Express keeps every other route.
 */
export function rpcHandler(deps: HttpAppDeps): (req: IncomingMessage, res: ServerResponse) => void {
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

type RequestReadResult =
  | { ok: true; envelope: Extract<Envelope, { ok: true }> }
  | { ok: false; send: (res: ServerResponse) => void; label: string; code: number }
  | { ok: false; aborted: true };

/** The JSON-RPC envelope of a body, or undefined when it is not UTF-8 JSON. */
function parseEnvelope(body: Buffer): Envelope | undefined {
  try {
    return readEnvelope(JSON.parse(utf8.decode(body)));
  } catch {
    return undefined;
  }
}

/** Content type, size, JSON and envelope: the answer to send when any of them is wrong. */
async function readRequest(deps: HttpAppDeps, req: IncomingMessage): Promise<RequestReadResult> {
  if (!isJsonMediaType(req.headers['content-type'])) {
    await discardRest(req, deps.bodyLimitBytes, 5000);
    return {
      ok: false,
      label: '(invalid)',
      code: 415,
      send: (res) => sendProtocolError(res, 415, null, PROTOCOL.invalid, 'Content-Type must be application/json'),
    };
  }
  const read = await readBody(req, deps.bodyLimitBytes, deps.bodyTimeoutMs);
  if (!read.ok) {
    if (read.reason === 'aborted') return { ok: false, aborted: true };
    if (read.reason === 'too-slow') {
      return {
        ok: false,
        label: '(invalid)',
        code: 408,
        send: (res) => {
          // The client is still sending: answer, then cut the connection rather than read the rest.
          res.setHeader('Connection', 'close');
          res.on('finish', () => req.socket.destroy());
          sendProblem(
            res,
            new AppError('REQUEST_TIMEOUT', `The request body did not arrive within ${deps.bodyTimeoutMs} ms`),
          );
        },
      };
    }
    await discardRest(req, 8 * deps.bodyLimitBytes, 5000);
    return {
      ok: false,
      label: '(invalid)',
      code: 413,
      send: (res) => {
        res.setHeader('Connection', 'close');
        sendProtocolError(res, 413, null, PROTOCOL.invalid, `The request body exceeds ${deps.bodyLimitBytes} bytes`);
      },
    };
  }
  const envelope = parseEnvelope(read.body);
  if (envelope === undefined) {
    return {
      ok: false,
      label: '(invalid)',
      code: PROTOCOL.parse.code,
      send: (res) => sendProtocolError(res, 400, null, PROTOCOL.parse, 'The request body is not valid JSON'),
    };
  }
  if (!envelope.ok) {
    return {
      ok: false,
      label: '(invalid)',
      code: envelope.error.code,
      send: (res) =>
        envelope.notification
          ? sendNoContent(res)
          : sendProtocolError(res, envelope.idReadable ? 200 : 400, envelope.id, envelope.error, envelope.detail),
    };
  }
  return { ok: true, envelope };
}

/** A discovery request is a few dozen bytes: more, or slower, is not one. */
const DISCOVER_MAX_BYTES = 4096;
const DISCOVER_MAX_MS = 5000;

/**
 * The id of a token-less rpc.discover request; false when the body is something else (it has been read,
 * or refused and the connection is to close); 'aborted' when the client went away.
 */
async function readDiscover(
  req: IncomingMessage,
): Promise<{ id: JsonRpcId; notification: boolean } | false | 'aborted'> {
  const read = await readBody(req, DISCOVER_MAX_BYTES, DISCOVER_MAX_MS);
  if (!read.ok) {
    if (read.reason === 'aborted') return 'aborted';
    void discardRest(req, DISCOVER_MAX_BYTES, 1000);
    return false;
  }
  const envelope = parseEnvelope(read.body);
  return envelope?.ok && envelope.method === DISCOVER_METHOD
    ? { id: envelope.id, notification: envelope.notification }
    : false;
}

/** What the audit trail records of one call, filled in as the call goes. */
interface CallRecord {
  time: string;
  requestId: string;
  who?: Identified;
  method: string;
  index: string | null;
  paramsDigest: string | null;
  returned: number | null;
}

function whoOf(p: Principal): Identified {
  return {
    userId: p.user.id,
    userName: p.user.name,
    tokenId: p.tokenId,
    ...(p.embed ? { embedId: p.embed.id } : {}),
  };
}

async function handleRpc(
  deps: HttpAppDeps,
  req: IncomingMessage,
  res: ServerResponse,
  span: Span | undefined,
): Promise<void> {
  const started = process.hrtime.bigint();
  const requestId = resolveRequestId(req.headers[REQUEST_ID_HEADER]);
  span?.setAttribute('quarry.request_id', requestId);
  res.setHeader('X-Request-Id', requestId);
  deps.cors?.apply(req, res);
  // No child logger per request on the hot path: every line names the request id itself.
  const log = deps.log;
  const call: CallRecord = {
    time: new Date().toISOString(),
    requestId,
    method: '(unauthenticated)',
    index: null,
    paramsDigest: null,
    returned: null,
  };
  const done = (label: string, code: string) => {
    const ms = msSince(started);
    record(deps, label, code, ms, span);
    deps.audit?.record({
      time: call.time,
      userId: call.who?.userId ?? null,
      userName: call.who?.userName ?? null,
      tokenId: call.who?.tokenId ?? null,
      embedId: call.who?.embedId ?? null,
      method: call.method,
      index: call.index,
      paramsDigest: call.paramsDigest,
      outcome: code,
      durationMs: Math.round(ms * 1000) / 1000,
      returned: call.returned,
      requestId,
    });
    return ms;
  };

  const auth = await deps.authenticate.authenticate(req.headers.authorization);
  if (!auth.ok) {
    const app = auth.error;
    call.who = auth.who;
    // No token to count against: the client's address is. A flood of token-less calls is refused before
    // its body is read, and is one audit row per address and window, not one per call.
    if (deps.addressLimiter) {
      const taken = await deps.addressLimiter.take(`addr:${req.socket.remoteAddress ?? 'unknown'}`);
      if (!taken.ok) {
        void discardRest(req, deps.bodyLimitBytes, 1000);
        res.setHeader('Connection', 'close');
        sendProblem(
          res,
          new AppError(
            'RATE_LIMITED',
            `Too many requests without a valid token from this address; retry after ${taken.retryAfterSeconds} s`,
            { retryAfterSeconds: taken.retryAfterSeconds },
          ),
        );
        call.method = '(rate limited)';
        if (taken.firstRefusal) done('(rate limited)', '429');
        else record(deps, '(rate limited)', '429', msSince(started), span);
        return;
      }
    }
    // rpc.discover needs no token: a small body without one is read, quickly, to see whether it asks for
    // that. Anything else without a token costs no more than before: a 401, the rest drained and dropped.
    const discover =
      req.headers.authorization === undefined && isJsonMediaType(req.headers['content-type'])
        ? await readDiscover(req)
        : undefined;
    if (discover === 'aborted') return;
    if (discover) {
      if (discover.notification) sendNoContent(res);
      else sendDiscover(req, res, discover.id);
      call.method = DISCOVER_METHOD;
      done(DISCOVER_METHOD, 'ok');
      return;
    }
    if (discover === undefined) void discardRest(req, deps.bodyLimitBytes, 5000);
    else res.setHeader('Connection', 'close');
    log.info({ requestId, status: app.httpStatus, detail: app.detail }, 'authentication refused');
    failSpan(span, app, SpanKind.SERVER);
    sendProblem(res, app);
    done('(unauthenticated)', String(app.httpStatus));
    return;
  }
  const principal = auth.principal;
  call.who = whoOf(principal);
  call.method = '(invalid)';

  // Before the body is read, like the other plain-HTTP refusals: a limited caller costs no parsing.
  if (deps.rateLimiter) {
    // An embed token draws on the bucket of the API token that issued it: minting more of them must
    // not multiply the issuer's allowance.
    const taken = await deps.rateLimiter.take(principal.tokenId);
    if (!taken.ok) {
      await discardRest(req, deps.bodyLimitBytes, 1000);
      call.method = '(rate limited)';
      sendProblem(
        res,
        new AppError('RATE_LIMITED', `Too many requests for this token; retry after ${taken.retryAfterSeconds} s`, {
          retryAfterSeconds: taken.retryAfterSeconds,
        }),
      );
      done('(rate limited)', '429');
      return;
    }
  }

  const read = await readRequest(deps, req);
  if ('aborted' in read) return;
  if (!read.ok) {
    span?.setAttribute('error.type', String(read.code));
    read.send(res);
    done(read.label, String(read.code));
    return;
  }
  const { envelope } = read;
  if (span && envelope.id !== null && !envelope.notification)
    span.setAttribute('rpc.jsonrpc.request_id', String(envelope.id));
  call.method = envelope.method;
  call.paramsDigest = paramsDigest(envelope.params);
  // Only a well-formed index name is recorded as one: the params are not validated yet, and a name is
  // what an operator reads back in `quarry audit`.
  if (typeof envelope.params.index === 'string')
    call.index = INDEX_NAME.test(envelope.params.index) ? envelope.params.index : '(invalid name)';
  else if (principal.embed) call.index = principal.embed.index;
  if (envelope.method === DISCOVER_METHOD) {
    if (envelope.notification) sendNoContent(res);
    else sendDiscover(req, res, envelope.id);
    done(DISCOVER_METHOD, 'ok');
    return;
  }

  // Revoked by this gateway while the body was on its way: refused as it would be now.
  if (!deps.authenticate.stillValid(principal)) {
    const revoked = new AppError('UNAUTHENTICATED', AUTH_FAILURES.revoked);
    failSpan(span, revoked, SpanKind.SERVER);
    sendProblem(res, revoked);
    done(envelope.method, '401');
    return;
  }

  try {
    const { data, cache, returned } = await deps.callMethod.call(principal, envelope.method, envelope.params, {
      requestId,
    });
    if (returned !== undefined) call.returned = returned;
    if (envelope.notification) sendNoContent(res);
    else
      sendText(
        res,
        200,
        JSON_TYPE,
        resultJson(envelope.id, data, cache === undefined ? { requestId } : { requestId, cache }),
      );
    const ms = done(envelope.method, 'ok');
    // Successes are counted in /metrics; a line each would cost ~15 % of throughput (bench/README.md).
    log.debug({ requestId, method: envelope.method, ms }, 'rpc ok');
  } catch (err) {
    const app = failSpan(span, err, SpanKind.SERVER);
    if (app.code === 'INTERNAL') {
      log.error({ requestId, err, method: envelope.method }, 'rpc failed');
      span?.setAttribute('rpc.jsonrpc.error_code', PROTOCOL.internal.code);
      if (envelope.notification) sendNoContent(res);
      else sendProtocolError(res, 200, envelope.id, PROTOCOL.internal, `Internal error (request ${requestId})`);
      done(envelope.method, String(PROTOCOL.internal.code));
      return;
    }
    span?.setAttribute('rpc.jsonrpc.error_code', app.httpStatus);
    const ms = done(envelope.method, String(app.httpStatus));
    log.info({ requestId, method: envelope.method, code: app.code, detail: app.detail, ms }, 'rpc refused');
    if (envelope.notification) return sendNoContent(res);
    if (app.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.ceil(app.retryAfterSeconds)));
    send(res, 200, JSON_TYPE, { jsonrpc: '2.0', id: envelope.id, error: toJsonRpcBusinessError(app) });
  }
}

// Labelled children are looked up once per (method, code): label hashing on every request is measurable.
const children = new WeakMap<
  QuarryMetrics,
  Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>
>();

function record(deps: HttpAppDeps, method: string, code: string, ms: number, span: Span | undefined): void {
  // The span is named for the method once it is known; '(invalid)' and '(unauthenticated)' are not methods.
  if (span && !method.startsWith('(')) {
    span.updateName(method);
    span.setAttribute('rpc.method', method);
  }
  const m = deps.metrics;
  if (!m) return;
  let perMetrics = children.get(m);
  if (!perMetrics) children.set(m, (perMetrics = new Map()));
  const key = `${method} ${code}`;
  let child = perMetrics.get(key);
  if (!child)
    perMetrics.set(
      key,
      (child = { count: m.rpcRequests.labels({ method, code }), duration: m.rpcDuration.labels({ method }) }),
    );
  child.count.inc();
  child.duration.observe(ms / 1000);
}

function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

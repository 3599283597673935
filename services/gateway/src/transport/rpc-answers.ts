import type { ServerResponse } from 'node:http';
import { toJsonRpcBusinessError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { failSpan, SpanKind } from '@quarry/tracing';
import type { MethodResult } from '../domain/handlers/method-handler';
import { JSON_TYPE, send, sendNoContent, sendProtocolError, sendText } from './http-responses';
import { PROTOCOL, type JsonRpcId } from './json-rpc-envelope';
import { resultJson } from './result-json';
import type { RpcCallRecord } from './rpc-call-record';

/** The request as the answer needs it. */
export interface Answering {
  id: JsonRpcId;
  method: string;
  notification: boolean;
}

/** A method's result serialised as the JSON-RPC answer (nothing for a notification), then recorded. */
export function answerResult(
  log: Logger,
  res: ServerResponse,
  call: RpcCallRecord,
  request: Answering,
  { data, cache, returned, servedBy, provenance, replay, verify }: MethodResult,
): void {
  const { requestId } = call;
  if (returned !== undefined) call.returned = returned;
  if (request.notification) sendNoContent(res);
  else
    sendText(
      res,
      200,
      JSON_TYPE,
      resultJson(request.id, data, {
        requestId,
        ...(cache === undefined ? {} : { cache }),
        ...(servedBy === undefined ? {} : { servedBy }),
        ...(provenance === undefined ? {} : { provenance }),
        ...(replay === undefined ? {} : { replay }),
        ...(verify === undefined ? {} : { verify }),
      }),
    );
  const ms = call.finish(request.method, 'ok');
  // Successes are counted in /metrics; a line each would cost too much of the throughput (bench/README.md).
  log.debug({ requestId, method: request.method, ms }, 'rpc ok');
}

/**
 * A failed call as its JSON-RPC error (the error mapping): an internal fault is -32603 naming only the
 * request id (the cause is logged), any other AppError its business code with the detail. Nothing is sent
 * for a notification.
 */
export function answerError(
  log: Logger,
  res: ServerResponse,
  call: RpcCallRecord,
  request: Answering,
  err: unknown,
): void {
  const { requestId, span } = call;
  const app = failSpan(span, err, SpanKind.SERVER);
  if (app.code === 'INTERNAL') {
    log.error({ requestId, err, method: request.method }, 'rpc failed');
    span?.setAttribute('rpc.jsonrpc.error_code', PROTOCOL.internal.code);
    if (request.notification) sendNoContent(res);
    else sendProtocolError(res, 200, request.id, PROTOCOL.internal, `Internal error (request ${requestId})`);
    call.finish(request.method, String(PROTOCOL.internal.code));
    return;
  }
  span?.setAttribute('rpc.jsonrpc.error_code', app.httpStatus);
  const ms = call.finish(request.method, String(app.httpStatus));
  log.info({ requestId, method: request.method, code: app.code, detail: app.detail, ms }, 'rpc refused');
  if (request.notification) return sendNoContent(res);
  if (app.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.ceil(app.retryAfterSeconds)));
  send(res, 200, JSON_TYPE, { jsonrpc: '2.0', id: request.id, error: toJsonRpcBusinessError(app) });
}

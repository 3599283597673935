import type { ServerResponse } from 'node:http';
import { ERROR_TABLE, type AppError } from '@quarry/errors';
import type { JsonRpcId, ProtocolError } from './json-rpc-envelope';

export const JSON_TYPE = 'application/json; charset=utf-8';

export function send(res: ServerResponse, status: number, contentType: string, body: unknown): void {
  sendText(res, status, contentType, JSON.stringify(body));
}

export function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

/** A notification's answer (JSON-RPC 2.0 §4.1): the call ran, or failed, and nothing is returned. */
export function sendNoContent(res: ServerResponse): void {
  res.writeHead(204, { 'Cache-Control': 'no-store' });
  res.end();
}

export function sendProtocolError(
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
export function sendProblem(res: ServerResponse, err: AppError): void {
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

/** An RFC 7807 body for the plain HTTP routes (no route, wrong verb, metrics off). */
export function sendHttpProblem(res: ServerResponse, status: number, title: string, detail: string): void {
  send(res, status, 'application/problem+json', { type: 'about:blank', title, status, detail });
}

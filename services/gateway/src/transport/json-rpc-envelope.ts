import { DISCOVER_METHOD, isMethodName, type MethodName } from '@quarry/contract';

export type JsonRpcId = string | number | null;

export const PROTOCOL = {
  parse: { code: -32700, message: 'Parse error' },
  invalid: { code: -32600, message: 'Invalid Request' },
  methodNotFound: { code: -32601, message: 'Method not found' },
  internal: { code: -32603, message: 'Internal error' },
} as const;

export type ProtocolError = (typeof PROTOCOL)[keyof typeof PROTOCOL];

/**
 * `notification`: a valid request object without an `id` member (JSON-RPC 2.0 §4.1). It is run, and answered
 * with HTTP 204 and no body, errors included. A request object that is itself invalid (wrong `jsonrpc`, no
 * `method`, `params` not an object) is not a notification and gets its error (§5: id null).
 */
export type Envelope =
  | {
      ok: true;
      id: JsonRpcId;
      notification: boolean;
      method: MethodName | typeof DISCOVER_METHOD;
      params: Record<string, unknown>;
    }
  | { ok: false; idReadable: boolean; id: JsonRpcId; notification: boolean; error: ProtocolError; detail: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id when it is one JSON-RPC allows (string, finite number, null or absent), else undefined. */
function readId(body: Record<string, unknown>): JsonRpcId | undefined {
  if (!('id' in body)) return null;
  const id = body.id;
  if (id === null || typeof id === 'string') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return undefined;
}

/** Validates a parsed body against JSON-RPC 2.0 and the API's own rules (no batches, params an object). */
export function readEnvelope(body: unknown): Envelope {
  const bad = (detail: string) => ({
    ok: false as const,
    idReadable: false,
    id: null,
    notification: false,
    error: PROTOCOL.invalid,
    detail,
  });
  if (Array.isArray(body)) return bad('Batch requests are not supported; send one request per call');
  if (!isPlainObject(body)) return bad('The request body must be a JSON-RPC 2.0 request object');
  const id = readId(body);
  if (id === undefined) return bad('id must be a string, a number or null');
  const fail = (error: ProtocolError, detail: string, notification = false) => ({
    ok: false as const,
    idReadable: true,
    id,
    notification,
    error,
    detail,
  });
  const notification = !('id' in body);
  if (body.jsonrpc !== '2.0') return fail(PROTOCOL.invalid, 'jsonrpc must be "2.0"');
  if (typeof body.method !== 'string' || body.method === '')
    return fail(PROTOCOL.invalid, 'method must be a non-empty string');
  const params = body.params === undefined ? {} : body.params;
  if (!isPlainObject(params)) return fail(PROTOCOL.invalid, 'params must be an object');
  if (!isMethodName(body.method) && body.method !== DISCOVER_METHOD) {
    return fail(PROTOCOL.methodNotFound, `Unknown method "${body.method.slice(0, 100)}"`, notification);
  }
  return { ok: true, id, notification, method: body.method, params };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@quarry/errors';
import { DISCOVER_METHOD } from '@quarry/contract';
import { sendNoContent, sendProblem, sendProtocolError } from './http-responses';
import { PROTOCOL, readEnvelope, type Envelope, type JsonRpcId } from './json-rpc-envelope';
import { discardRest, readBody } from './read-body';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** How much of a body is read, and for how long (QUARRY_BODY_LIMIT_BYTES, QUARRY_BODY_TIMEOUT_MS). */
export interface BodyLimits {
  bodyLimitBytes: number;
  /** An authenticated call's body must have arrived within this. */
  bodyTimeoutMs: number;
}

export type RequestReadResult =
  | { ok: true; envelope: Extract<Envelope, { ok: true }> }
  | { ok: false; send: (res: ServerResponse) => void; label: string; code: number }
  | { ok: false; aborted: true };

export function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** The JSON-RPC envelope of a body, or undefined when it is not UTF-8 JSON. */
export function parseEnvelope(body: Buffer): Envelope | undefined {
  try {
    return readEnvelope(JSON.parse(utf8.decode(body)));
  } catch {
    return undefined;
  }
}

/**
 * Content type, size, JSON and envelope (one request object: a batch is refused there): the answer to
 * send when any of them is wrong.
 */
export async function readRequest(limits: BodyLimits, req: IncomingMessage): Promise<RequestReadResult> {
  if (!isJsonMediaType(req.headers['content-type'])) {
    await discardRest(req, limits.bodyLimitBytes, 5000);
    return {
      ok: false,
      label: '(invalid)',
      code: 415,
      send: (res) => sendProtocolError(res, 415, null, PROTOCOL.invalid, 'Content-Type must be application/json'),
    };
  }
  const read = await readBody(req, limits.bodyLimitBytes, limits.bodyTimeoutMs);
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
            new AppError('REQUEST_TIMEOUT', `The request body did not arrive within ${limits.bodyTimeoutMs} ms`),
          );
        },
      };
    }
    await discardRest(req, 8 * limits.bodyLimitBytes, 5000);
    return {
      ok: false,
      label: '(invalid)',
      code: 413,
      send: (res) => {
        res.setHeader('Connection', 'close');
        sendProtocolError(res, 413, null, PROTOCOL.invalid, `The request body exceeds ${limits.bodyLimitBytes} bytes`);
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
export async function readDiscover(
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

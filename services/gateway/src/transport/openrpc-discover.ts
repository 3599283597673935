import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_VERSION, openRpcDocument, type OpenRpcDocument } from '@quarry/contract';
import { JSON_TYPE, send } from './http-responses';
import type { JsonRpcId } from './json-rpc-envelope';

let document: OpenRpcDocument | undefined;
const HOST = /^[A-Za-z0-9.-]{1,253}(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](?::\d{1,5})?$/;

/**
 * The contract is fixed for the life of the process, so the document is built once; only the server URL
 * follows the Host the caller used (OpenRPC wants it absolute), and a Host that is not a host name is
 * not echoed.
 */
export function discoverDocument(req: IncomingMessage): OpenRpcDocument {
  document ??= openRpcDocument({ serverUrl: 'http://localhost/api/v1', version: API_VERSION });
  const host = req.headers.host;
  const secure = req.headers['x-forwarded-proto'] === 'https';
  const url = `${secure ? 'https' : 'http'}://${host && HOST.test(host) ? host : 'localhost'}/api/v1`;
  return { ...document, servers: [{ name: 'Quarry', url }] };
}

/** rpc.discover's JSON-RPC answer: the OpenRPC document. */
export function sendDiscover(req: IncomingMessage, res: ServerResponse, id: JsonRpcId): void {
  send(res, 200, JSON_TYPE, { jsonrpc: '2.0', id, result: discoverDocument(req) });
}

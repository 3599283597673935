import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

export interface RawRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in pieces with Transfer-Encoding: chunked (no Content-Length). */
  chunks?: Buffer[];
}

/** One raw HTTP exchange: exact bytes out, status/headers/body back, write errors tolerated (the server may close early). */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(req.path ?? '/api/v1', baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(req.headers ?? {}) };
    if (req.body !== undefined) headers['Content-Length'] = Buffer.byteLength(req.body);
    const r = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: req.method ?? 'POST', headers, agent: false },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (req.chunks) {
      for (const c of req.chunks) r.write(c);
      r.end();
    } else {
      r.end(req.body);
    }
  });
}

export interface RpcClient {
  call(
    method: string,
    params?: unknown,
    extra?: { id?: unknown; headers?: Record<string, string> },
  ): Promise<RawResponse>;
}

export function rpcClient(baseUrl: string, token: string): RpcClient {
  return {
    call: (method, params, extra) =>
      rawRequest(baseUrl, {
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, ...(extra?.headers ?? {}) },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: extra && 'id' in extra ? extra.id : 1,
          method,
          ...(params === undefined ? {} : { params }),
        }),
      }),
  };
}

/**
 * A JSON-RPC POST to /api/v1 opened with its headers (Content-Length of `body`) but nothing of the body
 * written: the caller writes it, in pieces or at once, and may destroy the request before its answer.
 */
export function openRpcPost(baseUrl: string, token: string, body: string): http.ClientRequest {
  const url = new URL('/api/v1', baseUrl);
  return http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    agent: false,
    headers: {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      Authorization: `Bearer ${token}`,
    },
  });
}

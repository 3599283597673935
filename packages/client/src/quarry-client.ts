import type { Methods } from './contract-types.generated';
import { QuarryError } from './quarry-error';

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]['params'];
export type ResultOf<M extends MethodName> = Methods[M]['result'];

export interface QuarryClientOptions {
  /** The gateway's base URL (`http://host:8080`) or its endpoint (`…/api/v1`). */
  url: string;
  /** An API token; leave it out for rpc.discover only. */
  token?: string;
  /** Another fetch (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
  /** Per-call time limit in ms (default 60,000); the call is aborted and rejects when it passes. */
  timeoutMs?: number;
}

/** result.meta: the request id, and how the result cache answered where it applies. */
export interface ResponseMeta {
  requestId: string;
  cache?: 'hit' | 'miss' | 'bypass';
}

interface RpcBody {
  result?: { data: unknown; meta: ResponseMeta } | Record<string, unknown>;
  error?: { code: number; message: string; data?: { type?: string; detail?: string } };
}

interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
}

/**
 * Quarry's JSON-RPC API with the contract's types: `client.queries.execute({ index: 'movies' })`
 * resolves to result.data or rejects with a QuarryError.
 */
export class QuarryClient {
  readonly queries = { execute: (p: ParamsOf<'QUERIES.EXECUTE'>) => this.data('QUERIES.EXECUTE', p) };
  readonly indexes = { find: (p: ParamsOf<'INDEXES.FIND'> = {}) => this.data('INDEXES.FIND', p) };
  readonly crosstab = { execute: (p: ParamsOf<'CROSSTAB.EXECUTE'>) => this.data('CROSSTAB.EXECUTE', p) };
  readonly reports = {
    find: (p: ParamsOf<'REPORTS.FIND'> = {}) => this.data('REPORTS.FIND', p),
    metadata: (p: ParamsOf<'REPORTS.METADATA'>) => this.data('REPORTS.METADATA', p),
  };

  private readonly endpoint: string;
  private readonly fetchFn: typeof fetch;
  private nextId = 1;

  constructor(private readonly options: QuarryClientOptions) {
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/api/v1') ? base : `${base}/api/v1`;
    const given = options.fetch ?? globalThis.fetch;
    if (typeof given !== 'function')
      throw new TypeError('QuarryClient needs fetch (Node 18+ or a browser), or options.fetch');
    // Called unbound: a browser's fetch refuses to run with the client as `this` ("Illegal invocation").
    this.fetchFn = (input, init) => given.call(globalThis, input, init);
  }

  /** Any method by name, with result.data and result.meta. */
  async call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<{ data: ResultOf<M>; meta: ResponseMeta }> {
    const result = (await this.post(method, params)) as { data: ResultOf<M>; meta: ResponseMeta };
    return result;
  }

  /** The OpenRPC document of the server (rpc.discover; no token needed). */
  async discover(): Promise<Record<string, unknown>> {
    return (await this.post('rpc.discover', {})) as Record<string, unknown>;
  }

  private async data<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return (await this.call(method, params)).data;
  }

  private async post(method: string, params: object): Promise<unknown> {
    const id = this.nextId++;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (this.options.token !== undefined) headers.Authorization = `Bearer ${this.options.token}`;
    const res = await this.fetchFn(this.endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 60_000),
    });
    const requestId = res.headers.get('x-request-id') ?? undefined;
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new QuarryError({
        code: res.status,
        message: res.statusText || 'Unreadable response',
        detail: `The server answered HTTP ${res.status} with a body that is not JSON`,
        requestId,
      });
    }
    if (res.headers.get('content-type')?.startsWith('application/problem+json')) {
      const p = body as Problem;
      throw new QuarryError({
        code: p.status ?? res.status,
        message: p.title ?? res.statusText,
        type: p.type,
        detail: p.detail,
        requestId,
      });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new QuarryError({
        code: res.status,
        message: 'Invalid response',
        detail: 'The response is not a JSON-RPC response object',
        requestId,
      });
    }
    const rpc = body as RpcBody;
    if (rpc.error) {
      throw new QuarryError({
        code: rpc.error.code,
        message: rpc.error.message,
        type: rpc.error.data?.type,
        detail: rpc.error.data?.detail,
        requestId,
      });
    }
    if (rpc.result === undefined)
      throw new QuarryError({
        code: res.status,
        message: 'Invalid response',
        detail: 'The response has neither result nor error',
        requestId,
      });
    return rpc.result;
  }
}

import type { CrosstabExecuteParams, CrosstabExecuteResult, Methods } from './contract-types.generated';
import { QuarryError, type QuarryTransportCode } from './quarry-error';

export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = Methods[M]['params'];
export type ResultOf<M extends MethodName> = Methods[M]['result'];

/** CROSSTAB.EXECUTE's result for each output: what `format` or `chartType` narrow it to. */
export type CrosstabHtmlResult = Extract<CrosstabExecuteResult, { contentType: 'text/html' }>;
/** The JSON table (`format: 'json'`); an ECharts option is JSON too, told apart by its `chartType`. */
export type CrosstabJsonResult = Extract<CrosstabExecuteResult, { contentType: 'application/json'; rowCount: number }>;
export type CrosstabCsvResult = Extract<CrosstabExecuteResult, { contentType: 'text/csv' }>;
export type CrosstabXlsxResult = Extract<
  CrosstabExecuteResult,
  { contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }
>;
export type CrosstabChartResult = Extract<CrosstabExecuteResult, { contentType: 'image/png' | 'image/svg+xml' }>;
/** `format: 'pdf'`: the table printed on A4 (base64); with `chartType`, the chart on one page (CrosstabChartPdfResult). */
export type CrosstabPdfResult = Extract<CrosstabExecuteResult, { contentType: 'application/pdf'; rowCount: number }>;
export type CrosstabChartPdfResult = Extract<
  CrosstabExecuteResult,
  { contentType: 'application/pdf'; chartType: string }
>;
/** `imageFormat: 'echarts'`: `data` is the ECharts option the image is drawn from (see reviveChartOption). */
export type CrosstabEChartsResult = Extract<
  CrosstabExecuteResult,
  { contentType: 'application/json'; chartType: string }
>;

export interface QuarryClientOptions {
  /** The gateway's base URL (`http://host:8080`) or its endpoint (`…/api/v1`). */
  url: string;
  /** An API token; leave it out for rpc.discover only. */
  token?: string;
  /** Another fetch (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
  /** Per-call time limit in ms (default 60,000): the call is aborted and rejects with code `TIMEOUT`. */
  timeoutMs?: number;
  /**
   * Tries after the first for idempotent calls (default 0: none). A call that saves a report (`saveReport`),
   * REPORTS.UPDATE and REPORTS.DELETE are never retried. Retried: `NETWORK_ERROR`, `TIMEOUT`, and 503 (after its Retry-After).
   */
  retries?: number;
  /** The first wait between tries in ms, doubled each time (default 250); a 503's Retry-After wins. */
  retryDelayMs?: number;
}

/** What one call may override. */
export interface CallOptions {
  /** Aborts the call (and any wait between retries): it rejects with code `ABORTED`. */
  signal?: AbortSignal;
  timeoutMs?: number;
  retries?: number;
}

/** result.meta: the request id, how the result cache answered and which rollup answered, where they apply. */
export interface ResponseMeta {
  requestId: string;
  cache?: 'hit' | 'miss' | 'bypass';
  /** CROSSTAB.EXECUTE and a crosstab report's REPORTS.EXECUTE: the rollup answering instead of a scan. */
  servedBy?: string;
}

/** A done export's file, as `exports.download` answers it. */
export interface ExportDownload {
  /** The file's bytes as they arrive. */
  body: ReadableStream<Uint8Array>;
  /** From Content-Disposition: `export-<exportId>.<format>`. */
  fileName: string;
  contentType: string;
  /** Content-Length, when the server said. */
  bytes: number | undefined;
}

/**
 * `client.crosstab`: `format` ("json", "csv", "xlsx", "pdf", "html"), or `chartType` and `imageFormat` (or
 * format "pdf"), narrow the result type.
 */
export interface CrosstabMethods {
  execute(
    params: CrosstabExecuteParams & { chartType: string; format: 'pdf'; imageFormat?: undefined },
    options?: CallOptions,
  ): Promise<CrosstabChartPdfResult>;
  execute(
    params: CrosstabExecuteParams & { chartType: string; imageFormat: 'echarts' },
    options?: CallOptions,
  ): Promise<CrosstabEChartsResult>;
  execute(
    params: CrosstabExecuteParams & { chartType: string; imageFormat?: 'png' | 'svg'; format?: undefined },
    options?: CallOptions,
  ): Promise<CrosstabChartResult>;
  execute(params: CrosstabExecuteParams & { format: 'json' }, options?: CallOptions): Promise<CrosstabJsonResult>;
  execute(params: CrosstabExecuteParams & { format: 'csv' }, options?: CallOptions): Promise<CrosstabCsvResult>;
  execute(params: CrosstabExecuteParams & { format: 'xlsx' }, options?: CallOptions): Promise<CrosstabXlsxResult>;
  execute(
    params: CrosstabExecuteParams & { format: 'pdf'; chartType?: undefined },
    options?: CallOptions,
  ): Promise<CrosstabPdfResult>;
  execute(
    params: CrosstabExecuteParams & { format?: 'html'; chartType?: undefined },
    options?: CallOptions,
  ): Promise<CrosstabHtmlResult>;
  execute(params: CrosstabExecuteParams, options?: CallOptions): Promise<CrosstabExecuteResult>;
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

const TRANSPORT_TITLES: Record<QuarryTransportCode, string> = {
  NETWORK_ERROR: 'Network error',
  TIMEOUT: 'Timeout',
  ABORTED: 'Aborted',
};

function transportError(code: QuarryTransportCode, detail: string, cause?: unknown): QuarryError {
  return new QuarryError({ code, message: TRANSPORT_TITLES[code], detail, cause });
}

/** Retry-After in seconds (a number of seconds or an HTTP date), when present and sane. */
function retryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) : (Date.parse(header) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.max(0, seconds) : undefined;
}

/** Why fetch failed, in words: Node's "fetch failed" says nothing; its cause ("connect ECONNREFUSED …") does. */
function reason(err: unknown): string {
  // Duck-typed, not instanceof: fetch's errors may come from another realm.
  const message = (e: unknown) =>
    typeof e === 'object' && e !== null && 'message' in e && typeof e.message === 'string' ? e.message : undefined;
  const cause = typeof err === 'object' && err !== null && 'cause' in err ? err.cause : undefined;
  return message(cause) ?? message(err) ?? String(err);
}

/** Waits ms, or rejects with ABORTED as soon as the signal fires. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(transportError('ABORTED', 'The call was aborted', signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(transportError('ABORTED', 'The call was aborted', signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One controller for the caller's signal and the time limit of a request to `target`, so each failure
 * keeps its own code: ABORTED, TIMEOUT or NETWORK_ERROR.
 */
function limits(options: CallOptions, timeoutMs: number, target: string) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    /** The answer has come: the time limit no longer applies. */
    answered: () => clearTimeout(timer),
    /** Neither the time limit nor the caller's signal applies any more. */
    release: () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    },
    failed: (err: unknown): QuarryError => {
      if (options.signal?.aborted) return transportError('ABORTED', 'The call was aborted', options.signal.reason);
      if (timedOut) return transportError('TIMEOUT', `No answer within ${timeoutMs} ms`, err);
      return transportError('NETWORK_ERROR', `Could not reach ${target}: ${reason(err)}`, err);
    },
  };
}

/** Methods that change what is stored: never retried. */
export const NEVER_RETRIED: readonly MethodName[] = [
  'REPORTS.UPDATE',
  'REPORTS.DELETE',
  'REPORTS.SCHEDULE',
  'REPORTS.UNSCHEDULE',
  'TOKENS.EMBED',
  'EXPORTS.START',
  'TOKENS.REVOKE_EMBED',
];
const WRITES: readonly string[] = NEVER_RETRIED;

/**
 * Quarry's JSON-RPC API with the contract's types: `client.queries.execute({ index: 'movies' })`
 * resolves to result.data or rejects with a QuarryError.
 */
export class QuarryClient {
  readonly queries = {
    execute: (p: ParamsOf<'QUERIES.EXECUTE'>, o?: CallOptions) => this.data('QUERIES.EXECUTE', p, o),
    /** The same data again, from the same index version, given a result's meta.replay token. */
    replay: (p: ParamsOf<'QUERIES.REPLAY'>, o?: CallOptions) => this.data('QUERIES.REPLAY', p, o),
  };
  readonly indexes = {
    find: (p: ParamsOf<'INDEXES.FIND'> = {}, o?: CallOptions) => this.data('INDEXES.FIND', p, o),
  };
  readonly crosstab: CrosstabMethods = {
    execute: ((p: CrosstabExecuteParams, o?: CallOptions) =>
      this.data('CROSSTAB.EXECUTE', p, o)) as CrosstabMethods['execute'],
  };
  readonly reports = {
    find: (p: ParamsOf<'REPORTS.FIND'> = {}, o?: CallOptions) => this.data('REPORTS.FIND', p, o),
    metadata: (p: ParamsOf<'REPORTS.METADATA'>, o?: CallOptions) => this.data('REPORTS.METADATA', p, o),
    schedule: (p: ParamsOf<'REPORTS.SCHEDULE'>, o?: CallOptions) => this.data('REPORTS.SCHEDULE', p, o),
    schedules: (p: ParamsOf<'REPORTS.SCHEDULES'> = {}, o?: CallOptions) => this.data('REPORTS.SCHEDULES', p, o),
    unschedule: (p: ParamsOf<'REPORTS.UNSCHEDULE'>, o?: CallOptions) => this.data('REPORTS.UNSCHEDULE', p, o),
    execute: (p: ParamsOf<'REPORTS.EXECUTE'>, o?: CallOptions) => this.data('REPORTS.EXECUTE', p, o),
    update: (p: ParamsOf<'REPORTS.UPDATE'>, o?: CallOptions) => this.data('REPORTS.UPDATE', p, o),
    delete: (p: ParamsOf<'REPORTS.DELETE'>, o?: CallOptions) => this.data('REPORTS.DELETE', p, o),
  };
  readonly tokens = {
    /** A short-lived token for a browser, limited to one report or one index. */
    embed: (p: ParamsOf<'TOKENS.EMBED'>, o?: CallOptions) => this.data('TOKENS.EMBED', p, o),
    /** Ends one embed token (by the id TOKENS.EMBED returned) before it expires. */
    revokeEmbed: (p: ParamsOf<'TOKENS.REVOKE_EMBED'>, o?: CallOptions) => this.data('TOKENS.REVOKE_EMBED', p, o),
    /** Who the token belongs to: its user, what the user may read, the token's scopes and expiry. */
    whoami: (p: ParamsOf<'TOKENS.WHOAMI'> = {}, o?: CallOptions) => this.data('TOKENS.WHOAMI', p, o),
    /** Makes an API token (shown once in the answer), never wider than the calling token. */
    create: (p: ParamsOf<'TOKENS.CREATE'>, o?: CallOptions) => this.data('TOKENS.CREATE', p, o),
    /** A user's API tokens (the caller's own by default), without the tokens themselves. */
    find: (p: ParamsOf<'TOKENS.FIND'> = {}, o?: CallOptions) => this.data('TOKENS.FIND', p, o),
    /** Revokes an API token by id. */
    revoke: (p: ParamsOf<'TOKENS.REVOKE'>, o?: CallOptions) => this.data('TOKENS.REVOKE', p, o),
  };
  /** Where indexes' rows come from (indexes:write). */
  readonly sources = {
    create: (p: ParamsOf<'SOURCES.CREATE'>, o?: CallOptions) => this.data('SOURCES.CREATE', p, o),
    run: (p: ParamsOf<'SOURCES.RUN'>, o?: CallOptions) => this.data('SOURCES.RUN', p, o),
    runs: (p: ParamsOf<'SOURCES.RUNS'>, o?: CallOptions) => this.data('SOURCES.RUNS', p, o),
    find: (p: ParamsOf<'SOURCES.FIND'> = {}, o?: CallOptions) => this.data('SOURCES.FIND', p, o),
    update: (p: ParamsOf<'SOURCES.UPDATE'>, o?: CallOptions) => this.data('SOURCES.UPDATE', p, o),
    delete: (p: ParamsOf<'SOURCES.DELETE'>, o?: CallOptions) => this.data('SOURCES.DELETE', p, o),
  };
  /** The admin API: needs users:admin and a token whose user is an admin. */
  readonly users = {
    create: (p: ParamsOf<'USERS.CREATE'>, o?: CallOptions) => this.data('USERS.CREATE', p, o),
    update: (p: ParamsOf<'USERS.UPDATE'>, o?: CallOptions) => this.data('USERS.UPDATE', p, o),
    find: (p: ParamsOf<'USERS.FIND'> = {}, o?: CallOptions) => this.data('USERS.FIND', p, o),
    disable: (p: ParamsOf<'USERS.DISABLE'>, o?: CallOptions) => this.data('USERS.DISABLE', p, o),
    enable: (p: ParamsOf<'USERS.ENABLE'>, o?: CallOptions) => this.data('USERS.ENABLE', p, o),
    delete: (p: ParamsOf<'USERS.DELETE'>, o?: CallOptions) => this.data('USERS.DELETE', p, o),
  };
  readonly exports = {
    /** Starts a background export of a search's every record; download it at GET /exports/<exportId>. */
    start: (p: ParamsOf<'EXPORTS.START'>, o?: CallOptions) => this.data('EXPORTS.START', p, o),
    /** An export's state and progress. */
    status: (p: ParamsOf<'EXPORTS.STATUS'>, o?: CallOptions) => this.data('EXPORTS.STATUS', p, o),
    /**
     * A done export's file as a stream (a web ReadableStream, in Node and browsers alike; Node's
     * `Readable.fromWeb` makes it a Node stream): nothing is buffered beyond what the reader has not read
     * yet. `timeoutMs` bounds the wait for the answer's headers, not the transfer; `signal` aborts both.
     * Rejects with a QuarryError: 404 (unknown, or another user's), 409 (not done yet), 410 (expired).
     */
    download: (p: ParamsOf<'EXPORTS.STATUS'>, o?: CallOptions) => this.download(p.exportId, o ?? {}),
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
  async call<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    options: CallOptions = {},
  ): Promise<{ data: ResultOf<M>; meta: ResponseMeta }> {
    // Every method only reads, but for saving, changing and deleting a report and scheduling: a retry of a save
    // could save it twice, of new params make two versions, of a delete or an unschedule answer 404 for one that
    // happened, of a schedule make two.
    const idempotent =
      !('saveReport' in params && params.saveReport !== undefined) && !WRITES.includes(method as string);
    return (await this.withRetries(method, params, options, idempotent)) as { data: ResultOf<M>; meta: ResponseMeta };
  }

  /** The OpenRPC document of the server (rpc.discover; no token needed). */
  async discover(options: CallOptions = {}): Promise<Record<string, unknown>> {
    return (await this.withRetries('rpc.discover', {}, options, true)) as Record<string, unknown>;
  }

  private async data<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    options?: CallOptions,
  ): Promise<ResultOf<M>> {
    return (await this.call(method, params, options)).data;
  }

  private async download(exportId: string, options: CallOptions): Promise<ExportDownload> {
    const url = `${this.endpoint.slice(0, -'/api/v1'.length)}/exports/${encodeURIComponent(exportId)}`;
    const headers: Record<string, string> = {};
    if (this.options.token !== undefined) headers.Authorization = `Bearer ${this.options.token}`;
    const limit = limits(options, options.timeoutMs ?? this.options.timeoutMs ?? 60_000, url);
    let res: Response;
    try {
      if (options.signal?.aborted) throw options.signal.reason;
      res = await this.fetchFn(url, { method: 'GET', headers, signal: limit.signal });
    } catch (err) {
      limit.release();
      throw limit.failed(err);
    }
    // The time limit is for the answer; the caller's signal stays on for the transfer.
    limit.answered();
    if (res.status !== 200 || !res.body) {
      limit.release();
      // The problem's JSON (404, 409, 410, 401), read as a call's error is.
      return this.read(res, await res.text()) as never;
    }
    const disposition = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '');
    const length = res.headers.get('content-length');
    return {
      body: res.body,
      fileName: disposition?.[1] ?? `export-${exportId}`,
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      bytes: length === null ? undefined : Number(length),
    };
  }

  private async withRetries(method: string, params: object, options: CallOptions, idempotent: boolean) {
    const retries = idempotent ? Math.max(0, Math.floor(options.retries ?? this.options.retries ?? 0)) : 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.post(method, params, options);
      } catch (err) {
        const retryable =
          err instanceof QuarryError &&
          (err.code === 'NETWORK_ERROR' || err.code === 'TIMEOUT' || err.code === 503 || err.code === 429);
        if (!retryable || attempt >= retries) throw err;
        const backoff = (this.options.retryDelayMs ?? 250) * 2 ** attempt;
        await sleep(err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : backoff, options.signal);
      }
    }
  }

  private async post(method: string, params: object, options: CallOptions): Promise<unknown> {
    const id = this.nextId++;
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (this.options.token !== undefined) headers.Authorization = `Bearer ${this.options.token}`;
    const limit = limits(options, options.timeoutMs ?? this.options.timeoutMs ?? 60_000, this.endpoint);
    let res: Response;
    let text: string;
    try {
      if (options.signal?.aborted) throw options.signal.reason;
      res = await this.fetchFn(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal: limit.signal,
      });
      text = await res.text();
    } catch (err) {
      throw limit.failed(err);
    } finally {
      limit.release();
    }
    return this.read(res, text);
  }

  private read(res: Response, text: string): unknown {
    const requestId = res.headers.get('x-request-id') ?? undefined;
    const retryAfterSeconds = retryAfter(res.headers.get('retry-after'));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new QuarryError({
        code: res.status,
        message: res.statusText || 'Unreadable response',
        detail: `The server answered HTTP ${res.status} with a body that is not JSON`,
        requestId,
        retryAfterSeconds,
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
        retryAfterSeconds,
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
        retryAfterSeconds,
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

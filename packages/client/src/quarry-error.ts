/**
 * Why a call failed before any answer came back:
 * - `NETWORK_ERROR`: the server could not be reached, or the connection broke (refused, reset, DNS).
 * - `TIMEOUT`: no complete answer within `timeoutMs`; the request was aborted.
 * - `ABORTED`: the caller's `AbortSignal` fired.
 */
export type QuarryTransportCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED';

/**
 * Every failure of a call: a JSON-RPC error (code = the HTTP status for business errors, -32xxx for
 * protocol errors), an HTTP problem (401 outside the envelope), or a transport failure (a string code).
 * `detail` is the server's own message, or what went wrong on the way.
 */
export class QuarryError extends Error {
  /** A number for what the server answered; a {@link QuarryTransportCode} when it answered nothing. */
  readonly code: number | QuarryTransportCode;
  /** The JSON-RPC error message or the problem's title: "Bad Request", "Not Found", "Method not found". */
  readonly title: string;
  readonly type: string;
  readonly detail: string;
  /** The server's X-Request-Id: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait before trying again (Retry-After), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    code: number | QuarryTransportCode;
    message: string;
    type?: string;
    detail?: string;
    requestId?: string;
    retryAfterSeconds?: number;
    cause?: unknown;
  }) {
    super(init.detail ? `${init.message}: ${init.detail}` : init.message, { cause: init.cause });
    this.name = 'QuarryError';
    this.code = init.code;
    this.title = init.message;
    this.type = init.type ?? 'about:blank';
    this.detail = init.detail ?? init.message;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** True when the server never answered: a network failure, a timeout or an abort. */
  get isTransport(): boolean {
    return typeof this.code === 'string';
  }
}

/**
 * Every failure Quarry answers: a JSON-RPC error (code = the HTTP status for business errors, -32xxx for
 * protocol errors) or an HTTP problem (401 outside the envelope). `detail` is the server's own message.
 */
export class QuarryError extends Error {
  readonly code: number;
  /** The JSON-RPC error message or the problem's title: "Bad Request", "Not Found", "Method not found". */
  readonly title: string;
  readonly type: string;
  readonly detail: string;
  /** The server's X-Request-Id: quote it when reporting a problem. */
  readonly requestId: string | undefined;

  constructor(init: { code: number; message: string; type?: string; detail?: string; requestId?: string }) {
    super(init.detail ? `${init.message}: ${init.detail}` : init.message);
    this.name = 'QuarryError';
    this.code = init.code;
    this.title = init.message;
    this.type = init.type ?? 'about:blank';
    this.detail = init.detail ?? init.message;
    this.requestId = init.requestId;
  }
}

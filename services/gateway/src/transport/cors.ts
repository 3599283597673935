import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a browser may send to /api/v1 from another origin, and read back. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'x-request-id'];
const EXPOSED_HEADERS = 'Retry-After, X-Request-Id, WWW-Authenticate';
const MAX_AGE_SECONDS = 600;

/**
 * CORS for the JSON-RPC endpoint (QUARRY_CORS_ORIGINS). Only the exact origins listed are echoed back;
 * there is no wildcard and never Access-Control-Allow-Credentials: the API is called with a bearer token
 * the page holds (an embed token), never with cookies. A request from an origin not listed gets no CORS
 * header at all, so the browser keeps the answer from the page.
 */
export class CorsPolicy {
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.origins = new Set(origins);
  }

  get enabled(): boolean {
    return this.origins.size > 0;
  }

  /** The request's Origin when it is one of the allowed ones. */
  private allowed(req: IncomingMessage): string | undefined {
    const origin = req.headers.origin;
    return typeof origin === 'string' && this.origins.has(origin) ? origin : undefined;
  }

  /** On an actual call: lets the page read the answer when its origin is allowed. */
  apply(req: IncomingMessage, res: ServerResponse): void {
    if (!this.enabled) return;
    // Caches must not hand one origin's answer to another.
    res.setHeader('Vary', 'Origin');
    const origin = this.allowed(req);
    if (!origin) return;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  }

  /**
   * The preflight (OPTIONS) of a cross-origin POST: 204 with what is allowed when the origin, method and
   * headers all are; else 403 with no CORS header, which the browser reports as a CORS failure.
   */
  preflight(req: IncomingMessage, res: ServerResponse): void {
    const origin = this.allowed(req);
    const method = String(req.headers['access-control-request-method'] ?? '').toUpperCase();
    const asked = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    res.setHeader('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    res.setHeader('Cache-Control', 'no-store');
    if (!origin || method !== 'POST' || !asked.every((h) => ALLOWED_HEADERS.includes(h))) {
      const body = JSON.stringify({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: !origin
          ? 'This origin may not call the API from a browser (QUARRY_CORS_ORIGINS)'
          : `Only POST with the headers ${ALLOWED_HEADERS.join(', ')} may be sent from a browser`,
      });
      res.writeHead(403, { 'Content-Type': 'application/problem+json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    res.writeHead(204, {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': ALLOWED_HEADERS.join(', '),
      'Access-Control-Max-Age': String(MAX_AGE_SECONDS),
    });
    res.end();
  }
}

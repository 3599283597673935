import type { ServerResponse } from 'node:http';
import type { RateLimiter, RateLimitState } from '../ports/rate-limiter.port';

/*
 * The IETF httpapi RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy`
 * lists the policies a request is counted against (`q` requests per `w` seconds), `RateLimit` says where
 * this client stands on the one nearest to running out (`r` left, `t` seconds until it resets). A 429's
 * `t` is its `Retry-After`.
 */

/** Sets both fields on an answer the limiter governs (before its head is written). */
export function setRateLimitHeaders(res: ServerResponse, limiter: RateLimiter, state: RateLimitState): void {
  if (res.headersSent) return;
  res.setHeader(
    'RateLimit-Policy',
    limiter.policies.map((p) => `"${p.name}";q=${p.quota};w=${p.windowSeconds}`).join(', '),
  );
  res.setHeader('RateLimit', `"${state.policy}";r=${state.remaining};t=${state.resetSeconds}`);
}

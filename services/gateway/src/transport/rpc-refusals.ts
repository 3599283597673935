import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@quarry/errors';
import { DISCOVER_METHOD } from '@quarry/contract';
import type { Logger } from '@quarry/logger';
import { failSpan, SpanKind } from '@quarry/tracing';
import { AUTH_FAILURES, type Authentication, type AuthenticateUseCase } from '../domain/authenticate.use-case';
import type { Principal } from '../domain/principal';
import type { RateLimiter } from '../ports/rate-limiter.port';
import { refusedForAddress } from './address-limit';
import { setRateLimitHeaders } from './rate-limit-headers';
import { sendNoContent, sendProblem } from './http-responses';
import { sendDiscover } from './openrpc-discover';
import { discardRest } from './read-body';
import { isJsonMediaType, readDiscover } from './read-request';
import type { RpcCallRecord } from './rpc-call-record';

/*
 * The plain-HTTP refusals of the JSON-RPC endpoint (401, 429), answered outside the envelope. Each step
 * answers and records the call when it refuses, and says so; otherwise the call goes on.
 */

/**
 * A call without a valid token: refused per address when that limit is over, answered when it is a
 * token-less rpc.discover, else a 401 (or the 403 of a token with no scope).
 */
export async function answerUnauthenticated(
  deps: { addressLimiter?: RateLimiter; bodyLimitBytes: number; log: Logger },
  req: IncomingMessage,
  res: ServerResponse,
  call: RpcCallRecord,
  auth: Extract<Authentication, { ok: false }>,
): Promise<void> {
  const app = auth.error;
  call.who = auth.who;
  // The caller is told only the spec's text; why a JWT failed is for the operator.
  if (auth.reason) deps.log.info({ requestId: call.requestId, reason: auth.reason }, 'bearer JWT refused');
  // No token to count against: the client's address is. A flood of token-less calls is refused before
  // its body is read, and is one audit row per address and window, not one per call.
  const limited = await refusedForAddress(deps.addressLimiter, req, res);
  if (limited) {
    void discardRest(req, deps.bodyLimitBytes, 1000);
    call.method = '(rate limited)';
    if (limited.firstRefusal) call.finish('(rate limited)', '429');
    else call.count('(rate limited)', '429');
    return;
  }
  // rpc.discover needs no token: a small body without one is read, quickly, to see whether it asks for
  // that. Anything else without a token costs no more than before: a 401, the rest drained and dropped.
  const discover =
    req.headers.authorization === undefined && isJsonMediaType(req.headers['content-type'])
      ? await readDiscover(req)
      : undefined;
  if (discover === 'aborted') return;
  if (discover) {
    if (discover.notification) sendNoContent(res);
    else sendDiscover(req, res, discover.id);
    call.method = DISCOVER_METHOD;
    call.finish(DISCOVER_METHOD, 'ok');
    return;
  }
  if (discover === undefined) void discardRest(req, deps.bodyLimitBytes, 5000);
  else res.setHeader('Connection', 'close');
  deps.log.info({ requestId: call.requestId, status: app.httpStatus, detail: app.detail }, 'authentication refused');
  failSpan(call.span, app, SpanKind.SERVER);
  sendProblem(res, app);
  call.finish('(unauthenticated)', String(app.httpStatus));
}

/**
 * The per-token rate limit, before the body is read like the other plain-HTTP refusals: a limited caller
 * costs no parsing. True when the call was refused (and answered).
 */
export async function refusedByRateLimit(
  deps: { rateLimiter?: RateLimiter; bodyLimitBytes: number },
  req: IncomingMessage,
  res: ServerResponse,
  call: RpcCallRecord,
  principal: Principal,
): Promise<boolean> {
  if (!deps.rateLimiter) return false;
  // An embed token draws on the bucket of the API token that issued it: minting more of them must
  // not multiply the issuer's allowance.
  const taken = await deps.rateLimiter.take(principal.tokenId);
  setRateLimitHeaders(res, deps.rateLimiter, taken.state);
  if (taken.ok) return false;
  await discardRest(req, deps.bodyLimitBytes, 1000);
  call.method = '(rate limited)';
  sendProblem(
    res,
    new AppError('RATE_LIMITED', `Too many requests for this token; retry after ${taken.retryAfterSeconds} s`, {
      retryAfterSeconds: taken.retryAfterSeconds,
    }),
  );
  call.finish('(rate limited)', '429');
  return true;
}

/**
 * Revoked by this gateway while the body was on its way: refused as it would be now. True when the call
 * was refused (and answered).
 */
export function refusedAsRevoked(
  authenticate: AuthenticateUseCase,
  res: ServerResponse,
  call: RpcCallRecord,
  principal: Principal,
  method: string,
): boolean {
  if (authenticate.stillValid(principal)) return false;
  const revoked = new AppError('UNAUTHENTICATED', AUTH_FAILURES.revoked);
  failSpan(call.span, revoked, SpanKind.SERVER);
  sendProblem(res, revoked);
  call.finish(method, '401');
  return true;
}

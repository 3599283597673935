import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@quarry/errors';
import type { RateLimiter } from '../ports/rate-limiter.port';
import { sendProblem } from './http-responses';
import { setRateLimitHeaders } from './rate-limit-headers';

/**
 * The per-address limit (QUARRY_ANON_RATE_LIMIT) of requests that bring no valid credential: a bad or
 * missing bearer token on any route, a link that is not one this deployment signed. With no token to count
 * against, the client's address is. Answers the 429 itself when the address is over its allowance and
 * resolves with whether this was the window's first refusal (to be recorded once); undefined when admitted.
 */
export async function refusedForAddress(
  limiter: RateLimiter | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ firstRefusal: boolean } | undefined> {
  if (!limiter) return undefined;
  const taken = await limiter.take(`addr:${req.socket.remoteAddress ?? 'unknown'}`);
  setRateLimitHeaders(res, limiter, taken.state);
  if (taken.ok) return undefined;
  res.setHeader('Connection', 'close');
  sendProblem(
    res,
    new AppError(
      'RATE_LIMITED',
      `Too many requests without a valid token from this address; retry after ${taken.retryAfterSeconds} s`,
      { retryAfterSeconds: taken.retryAfterSeconds },
    ),
  );
  return { firstRefusal: taken.firstRefusal };
}

import { AppError } from '@quarry/errors';

/** What a Redis client says when the server is away or not serving yet, as against a fault of the caller's. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);
function isConnectionFailure(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | null;
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  if (typeof e?.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection is closed|Stream isn't writeable|enableOfflineQueue|^(LOADING|READONLY|MASTERDOWN|TRYAGAIN)\b/.test(
    message,
  );
}

/**
 * A port whose every method rejects with UNAVAILABLE, naming `what`, where its connection failed (Redis away,
 * a connection closed, the retries per request spent): for a caller that is a 503 to retry, not a 500 or a
 * call that hangs. An AppError, and any other failure (a fault, not an absence), passes as it is. Methods that do not return a promise are left alone.
 */
export function unavailableWhenDown<T extends object>(target: T, what: string): T {
  const down = (err: unknown): unknown =>
    err instanceof AppError || !isConnectionFailure(err)
      ? err
      : AppError.unavailable(`${what} is not answering right now; try again shortly`, err);
  return new Proxy(target, {
    get(obj, key, receiver) {
      const value: unknown = Reflect.get(obj, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const out: unknown = Reflect.apply(value, obj, args);
        return out instanceof Promise ? out.catch((err: unknown) => Promise.reject(down(err))) : out;
      };
    },
  });
}

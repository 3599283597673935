import { AppError } from '@quarry/errors';

/**
 * A port whose every method rejects with UNAVAILABLE, naming `what`, where its driver failed (Redis away,
 * a connection closed, the retries per request spent): for a caller that is a 503 to retry, not a 500 or a
 * call that hangs. An AppError passes as it is. Methods that do not return a promise are left alone.
 */
export function unavailableWhenDown<T extends object>(target: T, what: string): T {
  const down = (err: unknown): AppError =>
    err instanceof AppError ? err : AppError.unavailable(`${what} is not answering right now; try again shortly`, err);
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

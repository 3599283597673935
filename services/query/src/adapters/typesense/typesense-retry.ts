/**
 * When a Typesense request may be sent again. typesense-js retries every failure,
 * timeouts and 5xx included (src/Typesense/ApiCall.ts, performRequest: the catch block around the axios
 * call sleeps `retryIntervalSeconds` and tries again up to `numRetries` times). A search that timed out
 * is still running in Typesense, so sending it again only doubles the load of the moment that made it
 * slow. The client is therefore built with `numRetries: 0`, and this policy retries only errors raised
 * before the request reached the server: the connection was refused, or the name or route was not found.
 */

/** Node's codes for a connection that was never made (the request was not sent). */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  if ('code' in err && typeof err.code === 'string') return err.code;
  return 'cause' in err ? codeOf(err.cause) : undefined;
}

/**
 * Whether the request never reached Typesense. A timeout (axios ECONNABORTED / ETIMEDOUT), a reset
 * connection (the request may have arrived) and any HTTP answer are not: those are not retried.
 */
export function isConnectionError(err: unknown): boolean {
  if (typeof err === 'object' && err !== null && 'httpStatus' in err) return false;
  const code = codeOf(err);
  return code !== undefined && NOT_CONNECTED.has(code);
}

export interface RetryPolicy {
  /** Further attempts after the first. */
  retries: number;
  intervalMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 2, intervalMs: 100 };

/** Runs `op`, again after a pause while it fails with a connection error, never once `signal` aborted. */
export async function withConnectionRetry<T>(
  op: () => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (attempt >= policy.retries || signal?.aborted || !isConnectionError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, policy.intervalMs));
      if (signal?.aborted) throw err;
    }
  }
}

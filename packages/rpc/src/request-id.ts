import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';

// Bounded and restricted so a client cannot inject log lines or giant headers through its trace id.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function isSafeRequestId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_REQUEST_ID.test(value);
}

/** The client's id when it is safe to echo, else a fresh one. */
export function resolveRequestId(candidate: unknown): string {
  return isSafeRequestId(candidate) ? candidate : randomUUID();
}

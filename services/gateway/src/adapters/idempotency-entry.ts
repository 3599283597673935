import type { IdempotencyClaim } from '../ports/idempotency-store.port';

/** A key as both stores keep it: the fingerprint of the request that claimed it, and its answer once done. */
export interface IdempotencyEntry {
  fp: string;
  answer?: string;
}

/** Where a key someone already holds stands for a request with this fingerprint. */
export function claimOf(e: IdempotencyEntry, fingerprint: string): IdempotencyClaim {
  if (e.fp !== fingerprint) return { state: 'mismatch' };
  return e.answer === undefined ? { state: 'running' } : { state: 'done', answer: e.answer };
}

/** Where an Idempotency-Key stands: new (now claimed by this call), still running, done, or used for another request. */
export type IdempotencyClaim =
  { state: 'claimed' } | { state: 'running' } | { state: 'done'; answer: string } | { state: 'mismatch' };

/**
 * Idempotency keys (the Idempotency-Key header), each with the fingerprint of the request that first used
 * it and, once that request is answered, its answer. Adapters guarantee: `claim` is atomic across every
 * gateway sharing the store (two calls racing on one key: one claims it, the other sees it running);
 * a key and its answer are kept `ttlMs` from the claim, then gone; `release` forgets a key only while it
 * is still running under that fingerprint (a retry may then claim it again).
 */
export interface IdempotencyStore {
  claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyClaim>;
  complete(key: string, fingerprint: string, answer: string, ttlMs: number): Promise<void>;
  release(key: string, fingerprint: string): Promise<void>;
}

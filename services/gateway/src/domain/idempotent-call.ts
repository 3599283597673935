import { createHash } from 'node:crypto';
import { AppError, isAppError, isErrorCode, quoteInput } from '@quarry/errors';
import type { MethodName } from '@quarry/contract';
import type { IdempotencyStore } from '../ports/idempotency-store.port';
import { RawJson } from '../ports/raw-json';
import type { MethodResult } from './handlers/method-handler';
import type { Principal } from './principal';

/** How long a key and its answer are kept: a day, as the design says. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** An Idempotency-Key: 1 to 255 visible ASCII characters (RFC 9110 token-ish, as clients send UUIDs). */
const KEY = /^[\x21-\x7E]{1,255}$/;
/** An answer kept to be given again is at most this large; a larger one is not kept (a retry is told why). */
export const MAX_ANSWER_BYTES = 1_048_576;
/** Refusals a retry may get past: the key is released for it rather than keep the refusal for a day. */
export const PASSING: ReadonlySet<string> = new Set([
  'UNAVAILABLE',
  'TIMEOUT',
  'RATE_LIMITED',
  'INTERNAL',
  'REQUEST_TIMEOUT',
]);

/** Whether a call creates something, so that an Idempotency-Key applies to it. */
export function isIdempotentCall(method: MethodName, params: Record<string, unknown>): boolean {
  switch (method) {
    case 'REPORTS.SCHEDULE':
    case 'EXPORTS.START':
    case 'SOURCES.RUN':
      return true;
    case 'QUERIES.EXECUTE':
    case 'CROSSTAB.EXECUTE':
      return params.saveReport !== undefined;
    default:
      return false;
  }
}

/** JSON with object keys sorted, so that two bodies with the same meaning have one fingerprint. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

type Kept =
  | { result: { data: unknown; raw?: Record<string, string> } & Omit<MethodResult, 'data'> }
  | { error: { code: string; detail: string } }
  | { tooLarge: number };

/** The result as kept: a RawJson property (a page of records already serialized) kept as its text. */
function keep(result: MethodResult): Kept {
  const data = result.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { result };
  const raw: Record<string, string> = {};
  const plain: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (v instanceof RawJson) raw[k] = v.text;
    else plain[k] = v;
  }
  return { result: { ...result, data: plain, ...(Object.keys(raw).length ? { raw } : {}) } };
}

function restore(kept: Extract<Kept, { result: unknown }>['result']): MethodResult {
  const { raw, ...result } = kept;
  if (!raw) return result;
  const data = { ...(result.data as Record<string, unknown>) };
  for (const [k, text] of Object.entries(raw)) data[k] = new RawJson(text);
  return { ...result, data };
}

/**
 * Calls under an Idempotency-Key: the first call with a key runs; a call with the same key and the same
 * request (method and params) gets that call's answer again, also while it is still running (it waits for
 * it); a call with the same key and another request is a 409. Keys are the calling token's own and are
 * kept a day. A refusal a retry may pass (unavailable, a timeout) releases the key.
 */
export class IdempotentCall {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly options: { ttlMs?: number; waitMs?: number; pollMs?: number } = {},
  ) {}

  static checkKey(key: string): void {
    if (!KEY.test(key))
      throw AppError.invalid('Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good one)');
  }

  async run(
    principal: Principal,
    key: string,
    method: MethodName,
    params: Record<string, unknown>,
    exec: () => Promise<MethodResult>,
  ): Promise<MethodResult> {
    const fingerprint = createHash('sha256')
      .update(`${method}\n${canonical(params)}`)
      .digest('hex');
    const turn = await this.turn(principal, key, fingerprint, 'another request (method or params)');
    if (turn.first) return this.first(turn.id, fingerprint, exec);
    return replay(JSON.parse(turn.answer) as Kept, key);
  }

  /**
   * The key's turn for a request with this fingerprint: the first (the key is now claimed, and the caller
   * must `complete` or `release` it), or the first's answer once it is done (waited for while it runs).
   * Another fingerprint under the key is a 409 naming `other`; a first still running after the wait a 503.
   */
  async turn(
    principal: Principal,
    key: string,
    fingerprint: string,
    other: string,
  ): Promise<{ first: true; id: string } | { first: false; answer: string }> {
    IdempotentCall.checkKey(key);
    const id = `${principal.tokenId}:${createHash('sha256').update(key).digest('hex')}`;
    const until = Date.now() + (this.options.waitMs ?? 35_000);
    for (let pause = this.options.pollMs ?? 25; ; pause = Math.min(pause * 2, 500)) {
      const claim = await this.store.claim(id, fingerprint, this.ttl());
      if (claim.state === 'claimed') return { first: true, id };
      if (claim.state === 'done') return { first: false, answer: claim.answer };
      if (claim.state === 'mismatch')
        throw AppError.conflict(
          `Idempotency-Key ${quoteInput(key)} was used in the last 24 h with ${other}; send a new key for a new request`,
        );
      if (Date.now() >= until)
        throw AppError.busy(
          `A call with Idempotency-Key ${quoteInput(key)} is still running; retry it to get its answer`,
          5,
        );
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  /** Keeps the first's answer under its key (a key the store cannot keep is released: a retry runs again). */
  async complete(id: string, fingerprint: string, answer: string): Promise<void> {
    await this.store
      .complete(id, fingerprint, answer, this.ttl())
      .catch(() => this.store.release(id, fingerprint).catch(() => undefined));
  }

  /** Frees a claimed key, so that a retry runs as a first. */
  async release(id: string, fingerprint: string): Promise<void> {
    await this.store.release(id, fingerprint).catch(() => undefined);
  }

  private ttl(): number {
    return this.options.ttlMs ?? IDEMPOTENCY_TTL_MS;
  }

  private async first(id: string, fingerprint: string, exec: () => Promise<MethodResult>): Promise<MethodResult> {
    let kept: Kept;
    let outcome: { ok: MethodResult } | { err: unknown };
    try {
      const result = await exec();
      outcome = { ok: result };
      kept = keep(result);
    } catch (err) {
      if (!isAppError(err) || PASSING.has(err.code)) {
        await this.release(id, fingerprint);
        throw err;
      }
      outcome = { err };
      kept = { error: { code: err.code, detail: err.detail } };
    }
    let text = JSON.stringify(kept);
    if (Buffer.byteLength(text) > MAX_ANSWER_BYTES) text = JSON.stringify({ tooLarge: Buffer.byteLength(text) });
    // The call is done whatever the store says now: a key not kept is released, so a retry runs again
    // rather than wait a day on a key that never completes.
    await this.complete(id, fingerprint, text);
    if ('err' in outcome) throw outcome.err;
    return outcome.ok;
  }
}

function replay(kept: Kept, key: string): MethodResult {
  if ('result' in kept) return restore(kept.result);
  if ('error' in kept)
    throw new AppError(isErrorCode(kept.error.code) ? kept.error.code : 'INTERNAL', kept.error.detail);
  throw AppError.conflict(
    `The call with Idempotency-Key ${quoteInput(key)} was done, but its answer (${kept.tooLarge} bytes) is too large to give again; send a new key to run it again`,
  );
}

import { createHash } from 'node:crypto';
import { AppError, isErrorCode, quoteInput } from '@quarry/errors';
import type { UploadAnswer, UploadInput } from '../ports/record-uploads.port';
import { canonical, MAX_ANSWER_BYTES, PASSING, type IdempotentCall } from './idempotent-call';
import type { Principal } from './principal';

/** What a key keeps of an upload: its answer, and the sha-256 of the whole body it was given. */
interface KeptUpload {
  bodySha256: string;
  answer?: UploadAnswer;
  error?: { code: string; detail: string };
}

/** The body as it passes on, hashed; `whole` is set once the last piece has passed. */
class HashedBody implements AsyncIterable<Uint8Array> {
  private readonly hash = createHash('sha256');
  whole: string | undefined;

  constructor(private readonly body: AsyncIterable<Uint8Array>) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for await (const piece of this.body) {
      this.hash.update(piece);
      yield piece;
    }
    this.whole = this.hash.digest('hex');
  }
}

async function sha256Of(body: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  for await (const piece of body) hash.update(piece);
  return hash.digest('hex');
}

/**
 * Uploads under an Idempotency-Key. A body is not known before it has arrived, so the key is claimed for
 * the upload's parameters (index, mode, key field, strictness, format, gzip) and its answer kept with the
 * sha-256 of the whole body. A retry under the key is read to its end and hashed (nothing is loaded): the
 * same bytes get the first answer again, also while the first still runs (it waits for it); other bytes
 * or other parameters are a 409. An upload whose body was not read to its end (refused before or during
 * its load, or its client gone) published nothing and keeps nothing: the key is released and a retry runs.
 */
export class IdempotentUpload {
  constructor(private readonly calls: IdempotentCall) {}

  async run(
    principal: Principal,
    key: string,
    input: UploadInput,
    body: AsyncIterable<Uint8Array>,
    exec: (body: AsyncIterable<Uint8Array>) => Promise<UploadAnswer>,
  ): Promise<UploadAnswer> {
    const fingerprint = createHash('sha256')
      .update(`INDEXES.UPLOAD\n${canonical(input)}`)
      .digest('hex');
    const turn = await this.calls.turn(principal, key, fingerprint, 'another upload (index or parameters)');
    if (!turn.first) {
      const kept = JSON.parse(turn.answer) as KeptUpload;
      if ((await sha256Of(body)) !== kept.bodySha256)
        throw AppError.conflict(
          `Idempotency-Key ${quoteInput(key)} was used in the last 24 h for an upload of another body; send a new key for a new upload`,
        );
      if (kept.error)
        throw new AppError(isErrorCode(kept.error.code) ? kept.error.code : 'INTERNAL', kept.error.detail);
      return kept.answer!;
    }
    const hashed = new HashedBody(body);
    let kept: KeptUpload | undefined;
    try {
      const answer = await exec(hashed);
      const passing = answer.failure !== undefined && PASSING.has(answer.failure.code);
      // An answer too large to keep (a long list of rejects) is not kept: a retry runs again.
      if (hashed.whole !== undefined && !passing && JSON.stringify(answer).length <= MAX_ANSWER_BYTES)
        kept = { bodySha256: hashed.whole, answer };
      return answer;
    } catch (err) {
      if (hashed.whole !== undefined && err instanceof AppError && !PASSING.has(err.code))
        kept = { bodySha256: hashed.whole, error: { code: err.code, detail: err.detail } };
      throw err;
    } finally {
      if (kept) await this.calls.complete(turn.id, fingerprint, JSON.stringify(kept));
      else await this.calls.release(turn.id, fingerprint);
    }
  }
}

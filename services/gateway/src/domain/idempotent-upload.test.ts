import { AppError } from '@quarry/errors';
import { MemoryIdempotencyStore } from '../adapters/memory-idempotency-store.adapter';
import type { UploadAnswer, UploadInput } from '../ports/record-uploads.port';
import { IdempotentCall } from './idempotent-call';
import { IdempotentUpload } from './idempotent-upload';
import type { Principal } from './principal';

const ann = { tokenId: 'tok-ann' } as Principal;
const bob = { tokenId: 'tok-bob' } as Principal;
const input: UploadInput = { index: 'orders', mode: 'append', onError: 'fail', format: 'csv', gzip: false };

async function* pieces(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const t of texts) yield Buffer.from(t);
}

/** A load that reads its whole body and answers with a new version each time it runs. */
function loader(opts: { readAll?: boolean; failure?: UploadAnswer['failure']; throws?: AppError } = {}) {
  let runs = 0;
  const read: string[] = [];
  return {
    runs: () => runs,
    read,
    load: async (body: AsyncIterable<Uint8Array>): Promise<UploadAnswer> => {
      runs += 1;
      let text = '';
      for await (const piece of body) {
        text += Buffer.from(piece).toString();
        if (opts.readAll === false) break;
      }
      read.push(text);
      if (opts.throws) throw opts.throws;
      return {
        index: 'orders',
        version: runs,
        loaded: 2,
        rejected: 0,
        rejects: [],
        durationMs: 1,
        replaced: 0,
        ...(opts.failure ? { failure: opts.failure } : {}),
      };
    },
  };
}

describe('IdempotentUpload', () => {
  const uploads = () => new IdempotentUpload(new IdempotentCall(new MemoryIdempotencyStore(), { pollMs: 1 }));

  it('loads the first upload once and answers a retry of the same bytes with its answer', async () => {
    const u = uploads();
    const l = loader();
    const first = await u.run(ann, 'k', input, pieces('a,b\n', '1,2\n'), l.load);
    // The same bytes cut into other pieces are the same body.
    const again = await u.run(ann, 'k', input, pieces('a,b\n1', ',2\n'), l.load);
    expect([first.version, again.version, l.runs()]).toEqual([1, 1, 1]);
    // Another token's same key is its own upload.
    expect((await u.run(bob, 'k', input, pieces('a,b\n1,2\n'), l.load)).version).toBe(2);
  });

  it('refuses another body or other parameters under a key with a 409 naming which', async () => {
    const u = uploads();
    const l = loader();
    await u.run(ann, 'k', input, pieces('a,b\n1,2\n'), l.load);
    await expect(u.run(ann, 'k', input, pieces('a,b\n1,3\n'), l.load)).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: expect.stringMatching(/^Idempotency-Key "k" was used in the last 24 h for an upload of another body/),
    });
    await expect(u.run(ann, 'k', { ...input, mode: 'replace' }, pieces('a,b\n1,2\n'), l.load)).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: expect.stringMatching(/with another upload \(index or parameters\)/),
    });
    expect(l.runs()).toBe(1);
  });

  it('makes a retry racing the first wait for its answer, and loads once', async () => {
    const u = uploads();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const l = loader();
    const slow = async (body: AsyncIterable<Uint8Array>) => {
      await gate;
      return l.load(body);
    };
    const racing = [1, 2, 3].map(() => u.run(ann, 'k', input, pieces('a,b\n1,2\n'), slow));
    await new Promise((r) => setImmediate(r));
    release();
    const answers = await Promise.all(racing);
    expect([answers.map((a) => a.version), l.runs()]).toEqual([[1, 1, 1], 1]);
  });

  it('keeps a refusal of the whole body, and gives it again', async () => {
    const u = uploads();
    const l = loader({ throws: AppError.forbidden('orders belongs to another user') });
    await expect(u.run(ann, 'k', input, pieces('a\n1\n'), l.load)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(u.run(ann, 'k', input, pieces('a\n1\n'), l.load)).rejects.toMatchObject({
      code: 'FORBIDDEN',
      detail: 'orders belongs to another user',
    });
    expect(l.runs()).toBe(1);
  });

  it('keeps nothing for a body not read to its end, or a failure a retry may pass: the retry loads', async () => {
    const u = uploads();
    const partial = loader({ readAll: false, failure: { code: 'INVALID_ARGUMENT', detail: 'line 1: bad' } });
    await u.run(ann, 'k1', input, pieces('a\n', '1\n'), partial.load);
    await u.run(ann, 'k1', input, pieces('a\n', '1\n'), partial.load);
    expect(partial.runs()).toBe(2);
    const busy = loader({ failure: { code: 'UNAVAILABLE', detail: 'ingest is away' } });
    await u.run(ann, 'k2', input, pieces('a\n1\n'), busy.load);
    await u.run(ann, 'k2', input, pieces('a\n1\n'), busy.load);
    expect(busy.runs()).toBe(2);
    // A load failure of the whole body is kept like an answer.
    const strict = loader({ failure: { code: 'INVALID_ARGUMENT', detail: 'line 2: bad' } });
    const first = await u.run(ann, 'k3', input, pieces('a\n1\n'), strict.load);
    const again = await u.run(ann, 'k3', input, pieces('a\n1\n'), strict.load);
    expect([again.failure, strict.runs()]).toEqual([first.failure, 1]);
  });
});

import { AppError } from '@quarry/errors';
import { MemoryIdempotencyStore } from '../adapters/memory-idempotency-store.adapter';
import type { IdempotencyStore } from '../ports/idempotency-store.port';
import { RawJson } from '../ports/raw-json';
import { IdempotentCall, isIdempotentCall } from './idempotent-call';
import type { Principal } from './principal';

const ann = { tokenId: 'tok-ann' } as Principal;
const bob = { tokenId: 'tok-bob' } as Principal;
const params = { method: 'QUERIES.EXECUTE', params: { index: 'movies' }, format: 'csv' };

function counted(answer: () => Promise<unknown>) {
  let runs = 0;
  return {
    exec: async () => {
      runs += 1;
      return { data: await answer() };
    },
    runs: () => runs,
  };
}

describe('IdempotentCall', () => {
  it('runs the first call with a key once, and gives its answer again to the same request', async () => {
    const calls = new IdempotentCall(new MemoryIdempotencyStore());
    let n = 0;
    const c = counted(async () => ({ exportId: `e${++n}` }));
    const first = await calls.run(ann, 'k1', 'EXPORTS.START', params, c.exec);
    const again = await calls.run(
      ann,
      'k1',
      'EXPORTS.START',
      { format: 'csv', params: { index: 'movies' }, method: 'QUERIES.EXECUTE' },
      c.exec,
    );
    expect([first.data, again.data, c.runs()]).toEqual([{ exportId: 'e1' }, { exportId: 'e1' }, 1]);
    // Another key, or another token's same key, is another call.
    expect((await calls.run(ann, 'k2', 'EXPORTS.START', params, c.exec)).data).toEqual({ exportId: 'e2' });
    expect((await calls.run(bob, 'k1', 'EXPORTS.START', params, c.exec)).data).toEqual({ exportId: 'e3' });
  });

  it('makes callers racing on one key wait for the first, which runs once', async () => {
    const calls = new IdempotentCall(new MemoryIdempotencyStore(), { pollMs: 1 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = counted(async () => {
      await gate;
      return { scheduleId: 's1' };
    });
    const racing = Array.from({ length: 5 }, () => calls.run(ann, 'k', 'REPORTS.SCHEDULE', params, c.exec));
    await new Promise((r) => setTimeout(r, 20));
    release();
    const answers = await Promise.all(racing);
    expect(answers.map((a) => a.data)).toEqual(Array(5).fill({ scheduleId: 's1' }));
    expect(c.runs()).toBe(1);
  });

  it('refuses the same key with another request with a 409, and a bad key with a 400', async () => {
    const calls = new IdempotentCall(new MemoryIdempotencyStore());
    const c = counted(async () => ({ runId: 'r1' }));
    await calls.run(ann, 'k', 'SOURCES.RUN', { sourceId: 'a' }, c.exec);
    await expect(calls.run(ann, 'k', 'SOURCES.RUN', { sourceId: 'b' }, c.exec)).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: expect.stringMatching(/^Idempotency-Key "k" was used in the last 24 h with another request/),
    });
    await expect(calls.run(ann, 'k', 'EXPORTS.START', { sourceId: 'a' }, c.exec)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    for (const bad of ['', 'a b', 'x'.repeat(256), 'é'])
      await expect(calls.run(ann, bad, 'SOURCES.RUN', {}, c.exec)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(c.runs()).toBe(1);
  });

  it('gives a refusal again, but lets a retry run after one that may pass (unavailable, a timeout, a crash)', async () => {
    const calls = new IdempotentCall(new MemoryIdempotencyStore());
    const refused = counted(async () => {
      throw AppError.forbidden('no');
    });
    await expect(calls.run(ann, 'k', 'SOURCES.RUN', {}, refused.exec)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(calls.run(ann, 'k', 'SOURCES.RUN', {}, refused.exec)).rejects.toMatchObject({
      code: 'FORBIDDEN',
      detail: 'no',
    });
    expect(refused.runs()).toBe(1);
    for (const err of [AppError.unavailable('down'), AppError.timeout('slow'), new Error('crash')]) {
      let first = true;
      const flaky = counted(async () => {
        if (first) {
          first = false;
          throw err;
        }
        return { runId: 'ok' };
      });
      const key = `flaky-${String(err.message)}`;
      await expect(calls.run(ann, key, 'SOURCES.RUN', {}, flaky.exec)).rejects.toBe(err);
      expect((await calls.run(ann, key, 'SOURCES.RUN', {}, flaky.exec)).data).toEqual({ runId: 'ok' });
      expect(flaky.runs()).toBe(2);
    }
  });

  it('keeps a page of records already serialized as its text, and gives it back as such', async () => {
    const calls = new IdempotentCall(new MemoryIdempotencyStore());
    const c = counted(async () => ({ records: new RawJson('[{"a":1}]'), report: { guid: 'g' } }));
    await calls.run(ann, 'k', 'QUERIES.EXECUTE', { saveReport: { name: 'x' } }, c.exec);
    const again = await calls.run(ann, 'k', 'QUERIES.EXECUTE', { saveReport: { name: 'x' } }, c.exec);
    const data = again.data as { records: RawJson; report: unknown };
    expect(data.records).toBeInstanceOf(RawJson);
    expect([data.records.text, data.report, c.runs()]).toEqual(['[{"a":1}]', { guid: 'g' }, 1]);
  });

  it('tells a retry why when the answer was too large to keep, and says busy when the first outlasts the wait', async () => {
    const calls = new IdempotentCall(new MemoryIdempotencyStore(), { waitMs: 30, pollMs: 5 });
    const big = counted(async () => ({ text: 'x'.repeat(1_100_000) }));
    await calls.run(ann, 'big', 'EXPORTS.START', {}, big.exec);
    await expect(calls.run(ann, 'big', 'EXPORTS.START', {}, big.exec)).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: expect.stringMatching(/is too large to give again/),
    });
    const never = counted(() => new Promise(() => undefined));
    void calls.run(ann, 'slow', 'EXPORTS.START', {}, never.exec);
    await expect(calls.run(ann, 'slow', 'EXPORTS.START', {}, never.exec)).rejects.toMatchObject({
      code: 'CONFLICT',
      retryAfterSeconds: 5,
      detail: expect.stringMatching(/is still running; retry it to get its answer/),
    });
  });

  it('answers the call even when the store cannot keep its answer, and frees the key for a retry', async () => {
    const memory = new MemoryIdempotencyStore();
    const failing: IdempotencyStore = {
      claim: (...a) => memory.claim(...a),
      complete: async () => {
        throw AppError.unavailable('redis down');
      },
      release: (...a) => memory.release(...a),
    };
    const calls = new IdempotentCall(failing);
    const c = counted(async () => ({ exportId: 'e' }));
    expect((await calls.run(ann, 'k', 'EXPORTS.START', {}, c.exec)).data).toEqual({ exportId: 'e' });
    await calls.run(ann, 'k', 'EXPORTS.START', {}, c.exec);
    expect(c.runs()).toBe(2);
  });
});

describe('isIdempotentCall', () => {
  it('applies to the calls that create something', () => {
    expect(isIdempotentCall('EXPORTS.START', {})).toBe(true);
    expect(isIdempotentCall('REPORTS.SCHEDULE', {})).toBe(true);
    expect(isIdempotentCall('SOURCES.RUN', {})).toBe(true);
    expect(isIdempotentCall('QUERIES.EXECUTE', { saveReport: { name: 'r' } })).toBe(true);
    expect(isIdempotentCall('QUERIES.EXECUTE', {})).toBe(false);
    expect(isIdempotentCall('INDEXES.FIND', {})).toBe(false);
  });
});

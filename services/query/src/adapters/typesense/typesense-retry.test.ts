import { isConnectionError, withConnectionRetry } from './typesense-retry';

/** Errors shaped as typesense-js 2.1 raises them: axios errors carry Node's code, HTTP ones httpStatus. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8108'), { code: 'ECONNREFUSED' });
const timedOut = () => Object.assign(new Error('timeout of 10000ms exceeded'), { code: 'ECONNABORTED' });
const http503 = () => Object.assign(new Error('Request failed with HTTP code 503'), { httpStatus: 503 });

function failing(errors: Error[]) {
  let calls = 0;
  const op = async () => {
    const err = errors[calls++];
    if (err) throw err;
    return 'answer';
  };
  return { op, calls: () => calls };
}

const fast = { retries: 2, intervalMs: 1 };

describe('Typesense retry policy', () => {
  it.each([
    ['ECONNREFUSED', refused(), true],
    ['ENOTFOUND', Object.assign(new Error('getaddrinfo'), { code: 'ENOTFOUND' }), true],
    ['a cause carrying ECONNREFUSED', Object.assign(new Error('fetch failed'), { cause: refused() }), true],
    ['an axios timeout (ECONNABORTED)', timedOut(), false],
    ['ETIMEDOUT', Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }), false],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), false],
    ['an HTTP 503', http503(), false],
    ['an error without a code', new Error('odd'), false],
  ])('%s is a connection error: %s', (_name, err, expected) => {
    expect(isConnectionError(err)).toBe(expected);
  });

  it('retries a refused connection, up to the retries allowed', async () => {
    const twice = failing([refused(), refused()]);
    await expect(withConnectionRetry(twice.op, fast)).resolves.toBe('answer');
    expect(twice.calls()).toBe(3);
    const always = failing([refused(), refused(), refused(), refused()]);
    await expect(withConnectionRetry(always.op, fast)).rejects.toThrow(/ECONNREFUSED/);
    expect(always.calls()).toBe(3);
  });

  it('never sends a timed-out request again: it may still be running', async () => {
    const slow = failing([timedOut()]);
    await expect(withConnectionRetry(slow.op, fast)).rejects.toThrow(/timeout/);
    expect(slow.calls()).toBe(1);
  });

  it('does not retry HTTP answers, nor after the caller gave up', async () => {
    const busy = failing([http503()]);
    await expect(withConnectionRetry(busy.op, fast)).rejects.toThrow(/503/);
    expect(busy.calls()).toBe(1);
    const aborted = new AbortController();
    aborted.abort();
    const refusedOnce = failing([refused()]);
    await expect(withConnectionRetry(refusedOnce.op, fast, aborted.signal)).rejects.toThrow(/ECONNREFUSED/);
    expect(refusedOnce.calls()).toBe(1);
  });
});

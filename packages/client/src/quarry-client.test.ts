import { QuarryClient } from './quarry-client';
import { QuarryError } from './quarry-error';

type FetchArgs = Parameters<typeof fetch>;

/** A fetch that answers one canned response and records how it was called. */
function fakeFetch(
  status: number,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const calls: Array<{ self: unknown; args: FetchArgs }> = [];
  const fn = function (this: unknown, ...args: FetchArgs) {
    // Browsers' fetch throws "Illegal invocation" when `this` is not the global object.
    if (this !== undefined && this !== globalThis)
      throw new TypeError("Failed to execute 'fetch' on 'Window': Illegal invocation");
    calls.push({ self: this, args });
    return Promise.resolve(
      new Response(JSON.stringify(body), { status, headers: { 'x-request-id': 'req-1', ...headers } }),
    );
  } as typeof fetch;
  return { fn, calls };
}

describe('QuarryClient', () => {
  it('posts one JSON-RPC request with the token to /api/v1 and resolves result.data', async () => {
    const f = fakeFetch(200, {
      jsonrpc: '2.0',
      id: 1,
      result: { data: { indexes: [], nextCursor: null }, meta: { requestId: 'req-1' } },
    });
    const client = new QuarryClient({ url: 'http://quarry.test/', token: 'qk_x', fetch: f.fn });
    await expect(client.indexes.find({ limit: 5 })).resolves.toEqual({ indexes: [], nextCursor: null });
    const [url, init] = f.calls[0].args;
    expect(url).toBe('http://quarry.test/api/v1');
    expect(init?.method).toBe('POST');
    expect((init?.headers as Record<string, string>).Authorization).toBe('Bearer qk_x');
    expect(JSON.parse(String(init?.body))).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'INDEXES.FIND',
      params: { limit: 5 },
    });
  });

  it('calls fetch unbound, as a browser requires', async () => {
    const f = fakeFetch(200, { jsonrpc: '2.0', id: 1, result: { data: {}, meta: { requestId: 'r' } } });
    const original = globalThis.fetch;
    globalThis.fetch = f.fn;
    try {
      await new QuarryClient({ url: 'http://quarry.test' }).discover();
      expect(f.calls).toHaveLength(1);
    } finally {
      globalThis.fetch = original;
    }
  });

  it('rejects with QuarryError: a JSON-RPC error, a 401 problem, and a body that is not JSON', async () => {
    const rpc = fakeFetch(200, {
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: 400,
        message: 'Bad Request',
        data: { type: 'about:blank', detail: 'pageSize must be an integer between 1 and 1000' },
      },
    });
    const err = (await new QuarryClient({ url: 'http://q', token: 't', fetch: rpc.fn }).queries
      .execute({ index: 'm', pageSize: 0 })
      .catch((e: unknown) => e)) as QuarryError;
    expect(err).toBeInstanceOf(QuarryError);
    expect([err.code, err.title, err.detail, err.requestId]).toEqual([
      400,
      'Bad Request',
      'pageSize must be an integer between 1 and 1000',
      'req-1',
    ]);

    const problem = fakeFetch(
      401,
      { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'Token is unknown' },
      { 'content-type': 'application/problem+json' },
    );
    const unauth = (await new QuarryClient({ url: 'http://q', token: 't', fetch: problem.fn }).reports
      .find()
      .catch((e: unknown) => e)) as QuarryError;
    expect([unauth.code, unauth.title, unauth.detail]).toEqual([401, 'Unauthorized', 'Token is unknown']);

    const html = {
      fn: (() => Promise.resolve(new Response('<html>proxy error</html>', { status: 502 }))) as typeof fetch,
    };
    const bad = (await new QuarryClient({ url: 'http://q', fetch: html.fn }).indexes
      .find()
      .catch((e: unknown) => e)) as QuarryError;
    expect(bad).toBeInstanceOf(QuarryError);
    expect(bad.code).toBe(502);
    expect(bad.detail).toContain('not JSON');
  });
});

describe('QuarryClient on answers that are JSON but not a response object', () => {
  it.each(['null', '[1,2]', '"text"', '42'])('rejects %s with a QuarryError, not a TypeError', async (text) => {
    const fn = (() =>
      Promise.resolve(
        new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }),
      )) as typeof fetch;
    const err = await new QuarryClient({ url: 'http://q', fetch: fn }).indexes.find().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).detail).toContain('not a JSON-RPC response');
  });
});

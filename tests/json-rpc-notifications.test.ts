import { rawRequest, type RawResponse } from './support/http';
import { useDemoStack } from './support/demo-stack';

/*
 * JSON-RPC 2.0 §4.1 notifications (docs/api.md "Notifications"): a request without an id member is run
 * and answered with HTTP 204 and no body, errors included; only the plain-HTTP refusals that come before
 * the body is read (401, 413, 415) still answer. An invalid request object is not a notification.
 */

const demo = useDemoStack();

const post = (body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(demo().url, {
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${demo().token}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

function expectNoContent(res: RawResponse): void {
  expect(res.status).toBe(204);
  expect(res.text).toBe('');
  expect(res.headers['content-type']).toBeUndefined();
  expect(res.headers['x-request-id']).toMatch(/\S/);
}

async function reportNames(search: string): Promise<string[]> {
  const res = await post({ jsonrpc: '2.0', id: 1, method: 'REPORTS.FIND', params: { search } });
  const body = res.json as { result: { data: { reports: Array<{ name: string }> } } };
  return body.result.data.reports.map((r) => r.name);
}

describe('notifications (requests without an id)', () => {
  it('runs the call and answers 204 with no body: a notification that saves a report saves it', async () => {
    expect(await reportNames('notified')).toEqual([]);
    const res = await post({
      jsonrpc: '2.0',
      method: 'QUERIES.EXECUTE',
      params: { index: 'movies', query: 'Title:Titanic', saveReport: { name: 'notified titanic' } },
    });
    expectNoContent(res);
    expect(await reportNames('notified')).toEqual(['notified titanic']);
  });

  it.each([
    ['a business error (unknown index)', { jsonrpc: '2.0', method: 'QUERIES.EXECUTE', params: { index: 'nope' } }],
    [
      'invalid params (every problem, none of them answered)',
      { jsonrpc: '2.0', method: 'QUERIES.EXECUTE', params: { index: 'movies', pageSize: 0, foo: 1 } },
    ],
    ['an unknown method', { jsonrpc: '2.0', method: 'NO.SUCH_METHOD' }],
    [
      'a 409 (a report name already used)',
      {
        jsonrpc: '2.0',
        method: 'QUERIES.EXECUTE',
        params: { index: 'movies', query: 'Title:Titanic', saveReport: { name: 'notified titanic' } },
      },
    ],
    ['rpc.discover', { jsonrpc: '2.0', method: 'rpc.discover' }],
  ])('answers %s with 204 and no body', async (_label, body) => {
    expectNoContent(await post(body));
  });

  it('answers a token-less rpc.discover notification with 204 too', async () => {
    const res = await rawRequest(demo().url, {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'rpc.discover' }),
    });
    expectNoContent(res);
  });

  it('still answers the plain-HTTP refusals that come before the body is read: 401, 415, 413', async () => {
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'INDEXES.FIND' });
    const noToken = await rawRequest(demo().url, {
      headers: { 'Content-Type': 'application/json' },
      body: notification,
    });
    expect(noToken.status).toBe(401);
    expect(noToken.headers['content-type']).toBe('application/problem+json');
    const badToken = await post(notification, { Authorization: 'Bearer qk_wrong' });
    expect(badToken.status).toBe(401);
    const textPlain = await post(notification, { 'Content-Type': 'text/plain' });
    expect(textPlain.status).toBe(415);
    expect((textPlain.json as { id: unknown }).id).toBeNull();
    const huge = await post({ jsonrpc: '2.0', method: 'INDEXES.FIND', params: { searchText: 'a'.repeat(1_100_000) } });
    expect(huge.status).toBe(413);
  });

  it('answers a request whose id is null: it is a call, not a notification', async () => {
    const res = await post({ jsonrpc: '2.0', id: null, method: 'INDEXES.FIND', params: { searchText: 'airports' } });
    expect(res.status).toBe(200);
    const body = res.json as { id: unknown; result: { data: { indexes: Array<{ name: string }> } } };
    expect(body.id).toBeNull();
    expect(body.result.data.indexes.map((i) => i.name)).toEqual(['airports']);
  });

  it.each([
    ['a wrong jsonrpc version', { jsonrpc: '1.0', method: 'INDEXES.FIND' }, 200],
    ['no method', { jsonrpc: '2.0' }, 200],
    ['params that are not an object', { jsonrpc: '2.0', method: 'INDEXES.FIND', params: [1] }, 200],
    ['a batch array (one request per call)', [{ jsonrpc: '2.0', method: 'INDEXES.FIND' }], 400],
  ])('answers an invalid request object without id (%s) with -32600 and id null', async (_label, body, status) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  });

  it('answers a body that is not JSON with -32700: it cannot be known to be a notification', async () => {
    const res = await post('{"jsonrpc":"2.0","method":"INDEXES.FIND"');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ id: null, error: { code: -32700 } });
  });
});

describe('error details', () => {
  it('name every problem of a request, in a call with an id', async () => {
    const sort = Array.from({ length: 7 }, (_, i) => ({ field: `f${i}`, direction: 'sideways' }));
    const res = await post({ jsonrpc: '2.0', id: 9, method: 'QUERIES.EXECUTE', params: { index: 'movies', sort } });
    const detail = (res.json as { error: { code: number; data: { detail: string } } }).error.data.detail;
    expect(detail.split('; ')).toHaveLength(7);
    for (let i = 0; i < 7; i++) expect(detail).toContain(`sort[${i}].direction`);
  });
});

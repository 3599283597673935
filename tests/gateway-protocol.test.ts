import { AUTH_FAILURES } from '@quarry/gateway';
import { fastest } from '@quarry/testkit';
import { createIdentity, waitOutExpiry, withStore, type Identity } from './support/identities';
import { rawRequest, rpcClient, type RawResponse } from './support/http';
import { linesEventually, makeDataDir, startQuarry, type RunningQuarry, type Topology } from './support/quarry-process';

const LIMIT = 1_048_576;

interface RpcBody {
  jsonrpc: string;
  id: unknown;
  error?: { code: number; message: string; data?: { type: string; detail: string } };
  result?: { data: unknown; meta: { requestId: string } };
}

function expectJsonRpcError(res: RawResponse, status: number, id: unknown, code: number, message: string): RpcBody {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = res.json as RpcBody;
  expect(body.jsonrpc).toBe('2.0');
  expect(body).toHaveProperty('id');
  expect(body.id).toEqual(id);
  expect(body.result).toBeUndefined();
  expect(body.error?.code).toBe(code);
  expect(body.error?.message).toBe(message);
  return body;
}

function expectProblem(res: RawResponse, status: number, detail: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json');
  expect(res.json).toEqual({
    type: 'about:blank',
    title: status === 401 ? 'Unauthorized' : 'Forbidden',
    status,
    detail,
  });
  expect((res.json as Record<string, unknown>).jsonrpc).toBeUndefined();
}

describe.each<Topology>(['all', 'split'])('gateway protocol (QUARRY_TARGET=%s)', (topology) => {
  let quarry: RunningQuarry;
  let alice: Identity;
  let json: Record<string, string>;

  const post = (body: string | Buffer, headers: Record<string, string> = json) =>
    rawRequest(quarry.baseUrl, { headers, body });

  beforeAll(async () => {
    const dataDir = makeDataDir();
    alice = await createIdentity(dataDir, 'alice');
    json = { 'Content-Type': 'application/json', Authorization: `Bearer ${alice.token}` };
    quarry = await startQuarry({ topology, dataDir });
    // A hang guard: the split topology starts six processes (in two rounds) on 2 loaded cores.
  }, 180_000);

  afterAll(async () => {
    await quarry?.stop();
  });

  describe('protocol errors', () => {
    it('-32700: a body that is not JSON is HTTP 400 with id null', async () => {
      expectJsonRpcError(await post('{"jsonrpc":"2.0","id":1,'), 400, null, -32700, 'Parse error');
    });

    it('-32700: bytes that are not UTF-8 are a parse error too', async () => {
      expectJsonRpcError(await post(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, null, -32700, 'Parse error');
    });

    it('-32600: a batch array is refused with id null', async () => {
      const res = await post(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND' }]));
      expectJsonRpcError(res, 400, null, -32600, 'Invalid Request');
    });

    it.each(['"text"', '42', 'null', 'true'])(
      '-32600: the non-object body %s is refused with id null',
      async (body) => {
        expectJsonRpcError(await post(body), 400, null, -32600, 'Invalid Request');
      },
    );

    it('-32600: a wrong jsonrpc version echoes the id with HTTP 200', async () => {
      const res = await post(JSON.stringify({ jsonrpc: '1.0', id: 'a-1', method: 'INDEXES.FIND' }));
      expectJsonRpcError(res, 200, 'a-1', -32600, 'Invalid Request');
    });

    it('-32600: a missing jsonrpc member echoes the id with HTTP 200', async () => {
      expectJsonRpcError(
        await post(JSON.stringify({ id: 5, method: 'INDEXES.FIND' })),
        200,
        5,
        -32600,
        'Invalid Request',
      );
    });

    it('-32600: a missing or non-string method echoes the id', async () => {
      expectJsonRpcError(await post(JSON.stringify({ jsonrpc: '2.0', id: 6 })), 200, 6, -32600, 'Invalid Request');
      expectJsonRpcError(
        await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 12 })),
        200,
        6,
        -32600,
        'Invalid Request',
      );
    });

    it.each([
      ['an array', [1]],
      ['a string', 'x'],
      ['a number', 3],
      ['null', null],
    ])('-32600: params that are %s echo the id', async (_label, params) => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'INDEXES.FIND', params }));
      const body = expectJsonRpcError(res, 200, 9, -32600, 'Invalid Request');
      expect(body.error?.data?.detail).toBe('params must be an object');
    });

    it('-32600: a wrong media type is HTTP 415 with id null', async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND' });
      expectJsonRpcError(
        await post(body, { ...json, 'Content-Type': 'text/plain' }),
        415,
        null,
        -32600,
        'Invalid Request',
      );
      const { ['Content-Type']: _dropped, ...noType } = json;
      expectJsonRpcError(await post(body, noType), 415, null, -32600, 'Invalid Request');
      expectJsonRpcError(
        await post(body, { ...json, 'Content-Type': 'application/json; charset=latin1' }),
        415,
        null,
        -32600,
        'Invalid Request',
      );
    });

    it('accepts application/json with a utf-8 charset parameter', async () => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'NOPE' }), {
        ...json,
        'Content-Type': 'Application/JSON; charset=UTF-8',
      });
      expectJsonRpcError(res, 200, 1, -32601, 'Method not found');
    });

    it('-32601: an unknown method echoes the id', async () => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 'm', method: 'QUERIES.DELETE' }));
      const body = expectJsonRpcError(res, 200, 'm', -32601, 'Method not found');
      expect(body.error?.data?.detail).toContain('QUERIES.DELETE');
    });
  });

  describe('limits', () => {
    // A request padded with spaces after the JSON to an exact byte size.
    const padded = (size: number) => {
      const head = JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'QUERIES.DELETE' });
      return Buffer.from(head + ' '.repeat(size - Buffer.byteLength(head)));
    };

    it('accepts a body of exactly 1,048,576 bytes', async () => {
      const body = padded(LIMIT);
      expect(body.length).toBe(LIMIT);
      expectJsonRpcError(await post(body), 200, 'big', -32601, 'Method not found');
    });

    it('refuses one byte more with HTTP 413, -32600 and id null', async () => {
      expectJsonRpcError(await post(padded(LIMIT + 1)), 413, null, -32600, 'Invalid Request');
    });

    it('refuses a chunked body over the limit without Content-Length', async () => {
      const body = padded(LIMIT + 1);
      const chunks = [body.subarray(0, 400_000), body.subarray(400_000, 800_000), body.subarray(800_000)];
      const res = await rawRequest(quarry.baseUrl, { headers: json, chunks });
      expectJsonRpcError(res, 413, null, -32600, 'Invalid Request');
    });

    describe('hostile params under the body limit', () => {
      // The fastest of up to three tries (fastest() says why), each with its own request id, so that the
      // answer and the log lines checked are those of one call.
      const timed = async (params: Record<string, unknown>, requestId: string) => {
        let tries = 0;
        const { ms, value } = await fastest(2000, async () => {
          const id = `${requestId}-try${++tries}`;
          const res = await rpcClient(quarry.baseUrl, alice.token).call('QUERIES.EXECUTE', params, {
            id,
            headers: { 'X-Request-Id': id },
          });
          return { res, id };
        });
        return { ...value, ms };
      };
      const loggedBytes = async (requestId: string) => {
        // Once the call's request line is logged (a fixed pause alone could end before anything is, and
        // count nothing), and a little more for anything logged after it.
        await linesEventually(
          () => quarry.logs(),
          (lines) => lines.some((l) => l.includes(requestId)),
          10_000,
        );
        await new Promise((r) => setTimeout(r, 200));
        return quarry
          .logs()
          .filter((l) => l.includes(requestId))
          .reduce((n, l) => n + l.length, 0);
      };

      it('answers 40,000 unknown params with a 400 of under 1 KB naming ten, fast, and logs little', async () => {
        const params: Record<string, unknown> = { index: 'movies' };
        for (let i = 0; i < 40_000; i++) params[`key${i}`] = i;
        const { res, ms, id } = await timed(params, `keys-${topology}`);
        const body = expectJsonRpcError(res, 200, id, 400, 'Bad Request');
        expect(body.error?.data?.detail).toBe(
          `Unknown parameters: ${Array.from({ length: 10 }, (_, i) => `"key${i}"`).join(', ')} and 39990 more`,
        );
        expect(Buffer.byteLength(res.text)).toBeLessThan(1024);
        expect(ms).toBeLessThan(2000);
        expect(await loggedBytes(id)).toBeLessThan(4096);
      });

      // A 900 KB name used to reach the query service, whose error quoting it overflowed the gRPC
      // trailers, so the gateway waited out its whole deadline (30 s) and answered 504.
      it.each([
        ['sort[0].field', { index: 'movies', sort: [{ field: 'f'.repeat(900 * 1024) }] }],
        ['sort[0].direction', { index: 'movies', sort: [{ field: 'Title', direction: 'd'.repeat(900 * 1024) }] }],
        ['index', { index: 'i'.repeat(900 * 1024) }],
      ])('answers a 900 KB %s with a fast, small 400 naming it', async (name, params) => {
        const requestId = `huge-${name.replace(/\W/g, '')}-${topology}`;
        const { res, ms, id } = await timed(params, requestId);
        const body = expectJsonRpcError(res, 200, id, 400, 'Bad Request');
        expect(body.error?.data?.detail).toMatch(new RegExp(`^${name.replace(/[[\].]/g, '\\$&')} must `));
        expect(Buffer.byteLength(res.text)).toBeLessThan(1024);
        expect(ms).toBeLessThan(2000);
        expect(await loggedBytes(id)).toBeLessThan(4096);
      });

      // Valid JSON (a \ud800 escape) but not Unicode: each engine behind would read a U+FFFD instead.
      it('answers text holding an unpaired surrogate with a 400 naming the parameter', async () => {
        const requestId = `surrogate-${topology}`;
        const { res, id } = await timed({ index: 'movies', query: 'Title:>\ud800' }, requestId);
        const body = expectJsonRpcError(res, 200, id, 400, 'Bad Request');
        expect(body.error?.data?.detail).toBe(
          'query is not valid Unicode: it holds an unpaired surrogate (\\uD800) at character 8',
        );
      });
    });

    it('accepts a chunked body within the limit', async () => {
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'X' }));
      const res = await rawRequest(quarry.baseUrl, { headers: json, chunks: [body.subarray(0, 5), body.subarray(5)] });
      expectJsonRpcError(res, 200, 3, -32601, 'Method not found');
    });
  });

  describe('HTTP status rules', () => {
    it.each([
      ['a string', 'abc'],
      ['a number', 42],
      ['a fraction', 1.5],
      ['null', null],
    ])('echoes %s id with HTTP 200', async (_l, id) => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id, method: 'NOPE' }));
      expectJsonRpcError(res, 200, id, -32601, 'Method not found');
    });

    it('answers a notification (no id member) with 204 and no body, even an unknown method', async () => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', method: 'NOPE' }));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
    });

    it('answers an id null with id null and HTTP 200: it is a call, not a notification', async () => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: null, method: 'NOPE' }));
      expectJsonRpcError(res, 200, null, -32601, 'Method not found');
    });

    it('treats an id of a type JSON-RPC forbids as unreadable: HTTP 400, id null', async () => {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: { a: 1 }, method: 'INDEXES.FIND' }));
      expectJsonRpcError(res, 400, null, -32600, 'Invalid Request');
    });

    it('sends business errors with HTTP 200, the id echoed and the documented error shape', async () => {
      const res = await rpcClient(quarry.baseUrl, alice.token).call('QUERIES.EXECUTE', {}, { id: 77 });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        jsonrpc: '2.0',
        id: 77,
        error: { code: 400, message: 'Bad Request', data: { type: 'about:blank', detail: 'index is required' } },
      });
    });
  });

  describe('request ids', () => {
    it('puts the X-Request-Id in meta.requestId of a success, and a generated one when none is sent', async () => {
      const sent = await rpcClient(quarry.baseUrl, alice.token).call(
        'INDEXES.FIND',
        {},
        { id: 'ok', headers: { 'X-Request-Id': 'client-trace-7' } },
      );
      expect(sent.status).toBe(200);
      expect((sent.json as RpcBody).result).toEqual({
        data: { indexes: [], nextCursor: null },
        meta: { requestId: 'client-trace-7' },
      });
      const generated = await rpcClient(quarry.baseUrl, alice.token).call('INDEXES.FIND', {});
      const id = (generated.json as RpcBody).result?.meta.requestId;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(generated.headers['x-request-id']).toBe(id);
    });

    it('echoes a safe X-Request-Id header', async () => {
      const res = await rpcClient(quarry.baseUrl, alice.token).call(
        'NOPE',
        {},
        { headers: { 'X-Request-Id': 'trace-123.abc' } },
      );
      expect(res.headers['x-request-id']).toBe('trace-123.abc');
    });

    it('replaces an unsafe or oversized X-Request-Id instead of echoing it', async () => {
      for (const bad of ['has space', 'x'.repeat(300), '<script>']) {
        const res = await rpcClient(quarry.baseUrl, alice.token).call('NOPE', {}, { headers: { 'X-Request-Id': bad } });
        const sent = res.headers['x-request-id'];
        expect(typeof sent).toBe('string');
        expect(sent).not.toBe(bad);
        expect(sent).toMatch(/^[0-9a-f-]{36}$/);
      }
    });

    it('logs the request id on the request line', async () => {
      await rpcClient(quarry.baseUrl, alice.token).call(
        'QUERIES.EXECUTE',
        {},
        { headers: { 'X-Request-Id': 'log-me-42' } },
      );
      const logged = (lines: string[]) => lines.some((l) => l.includes('"requestId":"log-me-42"'));
      expect(logged(await linesEventually(() => quarry.logs(), logged, 30_000))).toBe(true);
    });
  });

  describe('authentication', () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND' });
    const withAuth = (authorization?: string) =>
      post(
        body,
        authorization === undefined
          ? { 'Content-Type': 'application/json' }
          : { 'Content-Type': 'application/json', Authorization: authorization },
      );

    it('401 when the Authorization header is missing', async () => {
      const res = await withAuth(undefined);
      expectProblem(res, 401, AUTH_FAILURES.headerInvalid);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    });

    it('401 when the Authorization header is not a bearer credential', async () => {
      expectProblem(await withAuth(`Basic ${Buffer.from('a:b').toString('base64')}`), 401, AUTH_FAILURES.headerInvalid);
      expectProblem(await withAuth(`Bearerx ${alice.token}`), 401, AUTH_FAILURES.headerInvalid);
    });

    it('401 when the bearer token is empty', async () => {
      expectProblem(await withAuth('Bearer'), 401, AUTH_FAILURES.emptyToken);
      expectProblem(await withAuth('Bearer    '), 401, AUTH_FAILURES.emptyToken);
    });

    it('401 when the token is unknown or malformed', async () => {
      expectProblem(await withAuth(`Bearer ${alice.token}x`), 401, AUTH_FAILURES.notFound);
      expectProblem(await withAuth('Bearer not-a-token'), 401, AUTH_FAILURES.notFound);
      expectProblem(await withAuth(`Bearer ${'q'.repeat(5000)}`), 401, AUTH_FAILURES.notFound);
    });

    it('401 on the very next request after a token is revoked', async () => {
      const bob = await createIdentity(quarry.dataDir, 'bob-revoked');
      const before = await rpcClient(quarry.baseUrl, bob.token).call('NOPE');
      expect(before.status).toBe(200);
      await withStore(quarry.dataDir, (s) => s.revokeToken(bob.tokenId));
      expectProblem(await withAuth(`Bearer ${bob.token}`), 401, AUTH_FAILURES.revoked);
    });

    it('401 when the token has expired', async () => {
      // Long enough to be used once on a loaded machine (1 s could expire before that), then waited out.
      const carol = await createIdentity(quarry.dataDir, 'carol-expiring', { expiresIn: '4s' });
      expect((await rpcClient(quarry.baseUrl, carol.token).call('NOPE')).status).toBe(200);
      await waitOutExpiry(carol);
      expectProblem(await withAuth(`Bearer ${carol.token}`), 401, AUTH_FAILURES.expired);
    });

    it('401 when the token owner was deleted or disabled', async () => {
      const dave = await createIdentity(quarry.dataDir, 'dave-disabled');
      await withStore(quarry.dataDir, (s) => s.setUserStatus('dave-disabled', 'disabled'));
      expectProblem(await withAuth(`Bearer ${dave.token}`), 401, AUTH_FAILURES.ownerUnresolved);
      const erin = await createIdentity(quarry.dataDir, 'erin-deleted');
      await withStore(quarry.dataDir, (s) => s.deleteUser('erin-deleted'));
      expectProblem(await withAuth(`Bearer ${erin.token}`), 401, AUTH_FAILURES.ownerUnresolved);
    });

    it('403 when the token carries no recognised scope', async () => {
      const frank = await createIdentity(quarry.dataDir, 'frank-noscope', {
        scopes: 'admin:all,foo',
        allowUnknownScopes: true,
      });
      expectProblem(await withAuth(`Bearer ${frank.token}`), 403, AUTH_FAILURES.noScope);
    });

    it('authenticates before looking at the body', async () => {
      expectProblem(await post('not json', { 'Content-Type': 'application/json' }), 401, AUTH_FAILURES.headerInvalid);
    });
  });

  describe('method scopes', () => {
    it.each([
      ['QUERIES.EXECUTE', 'query:execute', { index: 'x' }],
      ['INDEXES.FIND', 'indexes:read', {}],
      ['CROSSTAB.EXECUTE', 'query:execute', { index: 'x', rows: ['a'], totals: [{ aggregationType: 'Count' }] }],
      ['REPORTS.FIND', 'reports:read', {}],
      ['REPORTS.METADATA', 'reports:read', { guid: 'x' }],
    ])('%s without %s is a 403 business error naming the scope', async (method, scope, params) => {
      const others = 'query:execute,indexes:read,reports:read,reports:write'
        .split(',')
        .filter((s) => s !== scope)
        .join(',');
      const limited = await createIdentity(quarry.dataDir, `no-${scope.replace(':', '-')}`, { scopes: others });
      const res = await rpcClient(quarry.baseUrl, limited.token).call(method, params, { id: 'scope' });
      const body = expectJsonRpcError(res, 200, 'scope', 403, 'Forbidden');
      expect(body.error?.data?.detail).toBe(`Token lacks the required scope "${scope}"`);
    });

    it.each(['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE'])('%s with saveReport also needs reports:write', async (method) => {
      const reader = await createIdentity(quarry.dataDir, 'no-reports-write', {
        scopes: 'query:execute,indexes:read,reports:read',
      });
      const params = { index: 'x', rows: ['a'], totals: [{ aggregationType: 'Count' }], saveReport: { name: 'r' } };
      const res = await rpcClient(quarry.baseUrl, reader.token).call(method, params, { id: 2 });
      const body = expectJsonRpcError(res, 200, 2, 403, 'Forbidden');
      expect(body.error?.data?.detail).toContain('reports:write');
    });
  });

  describe('routes', () => {
    it('serves /healthz and /readyz', async () => {
      const health = await rawRequest(quarry.baseUrl, { method: 'GET', path: '/healthz' });
      expect(health.status).toBe(200);
      const ready = await rawRequest(quarry.baseUrl, { method: 'GET', path: '/readyz' });
      expect(ready.status).toBe(200);
      expect(ready.json).toEqual({ status: 'ready' });
    });

    it('answers other verbs on /api/v1 with 405 and other paths with 404', async () => {
      const get = await rawRequest(quarry.baseUrl, { method: 'GET', path: '/api/v1' });
      expect(get.status).toBe(405);
      expect(get.headers.allow).toBe('POST');
      expect((await rawRequest(quarry.baseUrl, { method: 'POST', path: '/api/v2', body: '{}' })).status).toBe(404);
    });
  });
});

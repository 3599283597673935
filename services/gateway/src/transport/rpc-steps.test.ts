import type { ServerResponse } from 'node:http';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import type { AuditRecorder } from '../domain/audit-recorder';
import type { Principal } from '../domain/principal';
import { isJsonMediaType, parseEnvelope } from './read-request';
import { answerError, answerResult } from './rpc-answers';
import { RpcCallRecord } from './rpc-call-record';
import { refusedAsRevoked, refusedByRateLimit } from './rpc-refusals';
import type { AuthenticateUseCase } from '../domain/authenticate.use-case';
import type { IncomingMessage } from 'node:http';
import type { RateLimiter } from '../ports/rate-limiter.port';

/** A response that keeps what was written to it. */
function fakeResponse() {
  const out = { status: 0, headers: {} as Record<string, unknown>, body: '' };
  const res = {
    setHeader: (k: string, v: unknown) => void (out.headers[k.toLowerCase()] = v),
    writeHead: (status: number, headers: Record<string, unknown>) => {
      out.status = status;
      for (const [k, v] of Object.entries(headers)) out.headers[k.toLowerCase()] = v;
    },
    end: (text?: string) => void (out.body = text ?? ''),
  };
  return { res: res as unknown as ServerResponse, out };
}

function recordedCall() {
  const rows: Array<Record<string, unknown>> = [];
  const audit = { record: (row: Record<string, unknown>) => rows.push(row) } as unknown as AuditRecorder;
  return { call: new RpcCallRecord(process.hrtime.bigint(), 'req-1', { audit }, undefined), rows };
}

const principal = {
  user: { id: 'u1', name: 'ana' },
  tokenId: 't1',
  embed: { id: 'e1', index: 'movies' },
} as unknown as Principal;

describe('the call record (audit step)', () => {
  it('records who, the method, a digest of params and a well-formed index only', () => {
    const { call, rows } = recordedCall();
    call.identify(principal);
    expect(call.method).toBe('(invalid)');
    call.describe('QUERIES.EXECUTE', { index: 'bad name!' }, principal);
    expect(call.index).toBe('(invalid name)');
    call.finish('QUERIES.EXECUTE', 'ok');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      userId: 'u1',
      userName: 'ana',
      tokenId: 't1',
      embedId: 'e1',
      method: 'QUERIES.EXECUTE',
      outcome: 'ok',
      requestId: 'req-1',
    });
    expect(typeof rows[0].paramsDigest).toBe('string');
  });

  it("takes an embed token's index when the params name none", () => {
    const { call } = recordedCall();
    call.describe('CROSSTAB.EXECUTE', {}, principal);
    expect(call.index).toBe('movies');
  });

  it('counts without an audit row when asked to', () => {
    const { call, rows } = recordedCall();
    call.count('(rate limited)', '429');
    expect(rows).toEqual([]);
  });
});

describe('reading the request', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON; charset=UTF-8', true],
    ['application/json; charset="utf-8"', true],
    ['application/json; charset=latin1', false],
    ['text/plain', false],
    [undefined, false],
  ])('content type %p is JSON: %p', (header, ok) => expect(isJsonMediaType(header)).toBe(ok));

  it('reads one request object and refuses a batch or bytes that are not UTF-8', () => {
    expect(parseEnvelope(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"INDEXES.FIND"}'))).toMatchObject({
      ok: true,
      method: 'INDEXES.FIND',
    });
    expect(parseEnvelope(Buffer.from('[]'))).toMatchObject({ ok: false, error: { code: -32600 } });
    expect(parseEnvelope(Buffer.from([0x7b, 0xff, 0x7d]))).toBeUndefined();
  });
});

describe('answering (serialisation and error mapping)', () => {
  const request = { id: 7, method: 'INDEXES.FIND', notification: false };

  it('serialises the result with the request id and the cache word in meta', () => {
    const { res, out } = fakeResponse();
    const { call, rows } = recordedCall();
    answerResult(silentLogger(), res, call, request, { data: { n: 1 }, cache: 'hit', returned: 3 });
    expect(out.status).toBe(200);
    expect(out.body).toBe(
      '{"jsonrpc":"2.0","id":7,"result":{"data":{"n":1},"meta":{"requestId":"req-1","cache":"hit"}}}',
    );
    expect(rows[0]).toMatchObject({ outcome: 'ok', returned: 3 });
  });

  it('answers a notification with 204 and no body', () => {
    const { res, out } = fakeResponse();
    answerResult(silentLogger(), res, recordedCall().call, { ...request, notification: true }, { data: 1 });
    expect([out.status, out.body]).toEqual([204, '']);
  });

  it('maps a business error to its code and detail, with Retry-After when it has one', () => {
    const { res, out } = fakeResponse();
    const { call, rows } = recordedCall();
    answerError(silentLogger(), res, call, request, AppError.overloaded('busy', 1.5));
    expect(out.status).toBe(200);
    expect(out.headers['retry-after']).toBe('2');
    expect(JSON.parse(out.body)).toMatchObject({ id: 7, error: { code: 503 } });
    expect(rows[0]).toMatchObject({ outcome: '503' });
  });

  it('hides an internal fault behind -32603 naming the request id only', () => {
    const { res, out } = fakeResponse();
    const { call, rows } = recordedCall();
    answerError(silentLogger(), res, call, request, new TypeError('secret detail'));
    expect(JSON.parse(out.body)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32603,
        message: 'Internal error',
        data: { type: 'about:blank', detail: 'Internal error (request req-1)' },
      },
    });
    expect(rows[0]).toMatchObject({ outcome: '-32603' });
  });
});

describe('the plain-HTTP refusals', () => {
  const endedRequest = {
    readableEnded: true,
    on: () => undefined,
    resume: () => undefined,
  } as unknown as IncomingMessage;

  it('lets a call within its token limit go on, and refuses one over it with 429 and Retry-After', async () => {
    const policies = [
      { name: 'token', quota: 1, windowSeconds: 2 },
      { name: 'token-burst', quota: 4, windowSeconds: 8 },
    ];
    const admit: RateLimiter = {
      policies,
      take: async () => ({ ok: true, state: { policy: 'token-burst', remaining: 3, resetSeconds: 8 } }),
    };
    const refuse: RateLimiter = {
      policies,
      take: async () => ({
        ok: false,
        retryAfterSeconds: 1,
        firstRefusal: true,
        state: { policy: 'token-burst', remaining: 0, resetSeconds: 1 },
      }),
    };
    const deps = { bodyLimitBytes: 1024 };
    const first = fakeResponse();
    expect(
      await refusedByRateLimit(
        { ...deps, rateLimiter: admit },
        endedRequest,
        first.res,
        recordedCall().call,
        principal,
      ),
    ).toBe(false);
    expect(first.out.status).toBe(0);
    // An admitted call carries where its token stands.
    expect([first.out.headers['ratelimit-policy'], first.out.headers['ratelimit']]).toEqual([
      '"token";q=1;w=2, "token-burst";q=4;w=8',
      '"token-burst";r=3;t=8',
    ]);
    const { res, out } = fakeResponse();
    const { call, rows } = recordedCall();
    expect(await refusedByRateLimit({ ...deps, rateLimiter: refuse }, endedRequest, res, call, principal)).toBe(true);
    expect([out.status, out.headers['retry-after'], out.headers['content-type'], out.headers['ratelimit']]).toEqual([
      429,
      '1',
      'application/problem+json',
      '"token-burst";r=0;t=1',
    ]);
    expect(JSON.parse(out.body)).toMatchObject({
      status: 429,
      detail: 'Too many requests for this token; retry after 1 s',
    });
    expect(rows[0]).toMatchObject({ method: '(rate limited)', outcome: '429' });
  });

  it('refuses a token revoked while its body was read with the 401 of a revoked token', () => {
    const { res, out } = fakeResponse();
    const { call, rows } = recordedCall();
    const authenticate = { stillValid: () => false } as unknown as AuthenticateUseCase;
    expect(refusedAsRevoked(authenticate, res, call, principal, 'INDEXES.FIND')).toBe(true);
    expect(out.status).toBe(401);
    expect(out.headers['www-authenticate']).toBe('Bearer realm="quarry", error="invalid_token"');
    expect(rows[0]).toMatchObject({ outcome: '401' });
    const live = { stillValid: () => true } as unknown as AuthenticateUseCase;
    expect(refusedAsRevoked(live, fakeResponse().res, recordedCall().call, principal, 'INDEXES.FIND')).toBe(false);
  });
});

import * as grpc from '@grpc/grpc-js';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import { freePort } from '@quarry/runtime';
import { CLIENT_OPTIONS, callUnary, type UnaryMethod } from './grpc-client';
import { bindGrpcServer, createGrpcServer, shutdownGrpcServer, unary } from './grpc-server';
import { loadQuarryProto } from './proto';
import type { FindIndexesRequest, FindIndexesResponse__Output } from './generated/index';

const v1 = loadQuarryProto().quarry.v1;
const FIND = v1.QueryService.service.FindIndexes;
// This server has no credential check (see internal-credential.int.test.ts); the client sends one anyway.
const TOKEN = 'k'.repeat(32);

describe('callUnary on a real grpc-js server', () => {
  const server = createGrpcServer();
  const log = silentLogger();
  let client: grpc.Client;
  const seenRequestIds: string[] = [];

  beforeAll(async () => {
    server.addService(v1.QueryService.service, {
      FindIndexes: unary<FindIndexesRequest, unknown>(log, 'FindIndexes', async (req, ctx) => {
        seenRequestIds.push(ctx.requestId);
        if (req.paramsJson === 'missing') throw AppError.notFound('Cursor "missing" not found');
        if (req.paramsJson === 'slow') await new Promise((r) => setTimeout(r, 500));
        return {
          indexes: [{ name: `n${req.paramsJson}`, description: 'd', fields: [], dynamicViews: [], recordCount: 3 }],
          nextCursor: 'next',
        };
      }),
    });
    const addr = await bindGrpcServer(server, '127.0.0.1:0');
    client = new grpc.Client(addr, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  });

  afterAll(async () => {
    client.close();
    await shutdownGrpcServer(server, 1000);
  });

  // A deadline as a hang guard (a loaded machine can hold a first call's connect for a while), except where a
  // test passes its own to see it pass.
  const call = (
    req: FindIndexesRequest,
    deadlineMs = 10_000,
    method: UnaryMethod<FindIndexesRequest, FindIndexesResponse__Output> = FIND,
  ) =>
    callUnary('query', client.getChannel(), method, req, { requestId: 'req-abc.1', deadlineMs, internalToken: TOKEN });

  it('returns the decoded response and carries the request id', async () => {
    const res = await call({ paramsJson: '7' });
    expect(res.indexes.map((i) => [i.name, i.recordCount])).toEqual([['n7', 3]]);
    expect(res.nextCursor).toBe('next');
    expect(seenRequestIds.at(-1)).toBe('req-abc.1');
  });

  it('a call on a channel this process closed is UNAVAILABLE saying the process is stopping, not a raw throw', async () => {
    const closed = new grpc.Client(client.getChannel().getTarget(), grpc.credentials.createInsecure(), CLIENT_OPTIONS);
    closed.close();
    const err = await callUnary(
      'query',
      closed.getChannel(),
      FIND,
      { paramsJson: '1' },
      {
        requestId: 'r',
        deadlineMs: 10_000,
        internalToken: TOKEN,
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'UNAVAILABLE',
      detail: 'The query service cannot be called: this process is stopping',
    });
  });

  it('keeps many concurrent calls apart', async () => {
    const res = await Promise.all(Array.from({ length: 50 }, (_, i) => call({ paramsJson: String(i) })));
    expect(res.map((r) => r.indexes[0]?.name)).toEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
  });

  it("passes the service's own error code and detail through", async () => {
    await expect(call({ paramsJson: 'missing' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      detail: 'Cursor "missing" not found',
    });
  });

  it('says TIMEOUT naming the service when the deadline passes', async () => {
    await expect(call({ paramsJson: 'slow' }, 50)).rejects.toMatchObject({
      code: 'TIMEOUT',
      detail: 'The query service did not answer in time',
    });
  });

  it('says UNAVAILABLE naming the service when nothing listens', async () => {
    const port = await freePort();
    const dead = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
    try {
      await expect(
        callUnary('crosstab', dead.getChannel(), FIND, {}, { requestId: 'r', deadlineMs: 2000, internalToken: TOKEN }),
      ).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        detail: 'The crosstab service is unavailable; try again shortly',
      });
    } finally {
      dead.close();
    }
  });

  it('turns a response it cannot parse into INTERNAL', async () => {
    const broken = {
      ...FIND,
      responseDeserialize: (): never => {
        throw new Error('bad bytes');
      },
    };
    await expect(call({ paramsJson: '1' }, 10_000, broken)).rejects.toMatchObject({ code: 'INTERNAL' });
  });

  it('turns a request it cannot serialise into INTERNAL without sending it', async () => {
    const before = seenRequestIds.length;
    const broken = {
      ...FIND,
      requestSerialize: (): never => {
        throw new Error('cannot encode');
      },
    };
    await expect(call({ paramsJson: '1' }, 10_000, broken)).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(seenRequestIds.length).toBe(before);
  });
});

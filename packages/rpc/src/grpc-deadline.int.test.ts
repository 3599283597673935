import * as grpc from '@grpc/grpc-js';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import { fastest } from '@quarry/testkit';
import { CLIENT_OPTIONS, callUnary } from './grpc-client';
import { bindGrpcServer, createGrpcServer, shutdownGrpcServer, unary } from './grpc-server';
import { loadQuarryProto } from './proto';
import type { FindIndexesRequest } from './generated/index';

const v1 = loadQuarryProto().quarry.v1;
const FIND = v1.QueryService.service.FindIndexes;

describe('unary(): the call deadline reaches the handler', () => {
  const server = createGrpcServer();
  let client: grpc.Client;
  /** When (Date.now()) each handler's signal aborted, and why. */
  const aborted: Array<{ at: number; reason: string }> = [];

  beforeAll(async () => {
    server.addService(v1.QueryService.service, {
      FindIndexes: unary<FindIndexesRequest, unknown>(silentLogger(), 'FindIndexes', (req, ctx) => {
        if (req.paramsJson === 'throw-sync') throw new Error('a handler bug, thrown before any promise');
        // Work that only ends when told to: what a DuckDB query does with its interrupt.
        return new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => {
            aborted.push({ at: Date.now(), reason: String((ctx.signal.reason as Error).message) });
            reject(ctx.signal.reason);
          });
        });
      }),
    });
    const addr = await bindGrpcServer(server, '127.0.0.1:0');
    client = new grpc.Client(addr, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
    // Connected before the first deadline runs: a connect that a loaded machine holds past 150 ms would
    // spend the deadline before the call reached any handler.
    await new Promise<void>((resolve, reject) =>
      client.waitForReady(Date.now() + 30_000, (err) => (err ? reject(err) : resolve())),
    );
  });
  afterAll(async () => {
    client.close();
    await shutdownGrpcServer(server, 1000);
  });

  const call = (req: FindIndexesRequest, deadlineMs: number) =>
    callUnary('query', client.getChannel(), FIND, req, {
      requestId: 'r-deadline',
      deadlineMs,
      internalToken: 'k'.repeat(32),
    });

  it('aborts the handler signal when the deadline passes, so its work stops instead of running on', async () => {
    // Timed from the call, where its deadline counts from: the handler may start a while after it.
    const sent = Date.now();
    await expect(call({}, 150)).rejects.toMatchObject({ code: 'TIMEOUT' });
    // The server learns of the deadline from the client's cancel or its own timer, whichever its
    // event loop reaches first: under a loaded machine that can trail the client's rejection, so
    // wait for it (the handler's work never ends by itself, so any abort at all proves the point).
    for (let waited = 0; aborted.length === 0 && waited < 10_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(aborted).toHaveLength(1);
    expect(aborted[0].at - sent).toBeGreaterThanOrEqual(100);
    expect(aborted[0].at - sent).toBeLessThan(10_000);
    expect(aborted[0].reason).toMatch(/deadline|cancelled/);
  });

  it('turns a handler that throws synchronously into INTERNAL instead of a crash', async () => {
    await expect(call({ paramsJson: 'throw-sync' }, 2000)).rejects.toMatchObject({ code: 'INTERNAL' });
    // The server still serves.
    await expect(call({}, 100)).rejects.toMatchObject({ code: 'TIMEOUT' });
  });
});

describe('error details that would not fit in a trailer', () => {
  const server = createGrpcServer();
  let client: grpc.Client;
  beforeAll(async () => {
    server.addService(v1.QueryService.service, {
      FindIndexes: unary<FindIndexesRequest, unknown>(silentLogger(), 'FindIndexes', async (req) => {
        // A message quoting a huge user string, as one did before details were cut at the source.
        throw AppError.invalid(`sort[0].field: unknown field "${req.paramsJson}"`);
      }),
    });
    const addr = await bindGrpcServer(server, '127.0.0.1:0');
    client = new grpc.Client(addr, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  });
  afterAll(async () => {
    client.close();
    await shutdownGrpcServer(server, 1000);
  });

  it('arrive cut, at once, instead of hanging the call until its deadline', async () => {
    // The fastest of up to three tries (fastest() says why): a call held to its deadline is slow in every one.
    const { ms, value: err } = await fastest(2000, () =>
      callUnary(
        'query',
        client.getChannel(),
        FIND,
        { paramsJson: 'F'.repeat(900_000) },
        { requestId: 'r', deadlineMs: 5000, internalToken: 'k'.repeat(32) },
      ).catch((e: unknown) => e),
    );
    expect(err).toMatchObject({
      code: 'INVALID_ARGUMENT',
      detail: expect.stringMatching(/^sort\[0\]\.field: unknown field "F+… \(message cut\)$/),
    });
    expect(Buffer.byteLength((err as AppError).detail)).toBeLessThanOrEqual(8 * 1024);
    expect(ms).toBeLessThan(2000);
  });
});

import * as grpc from '@grpc/grpc-js';
import { AppError } from '@quarry/errors';
import { silentLogger } from '@quarry/logger';
import { CLIENT_OPTIONS, callClientStream } from './grpc-client';
import { bindGrpcServer, clientStreaming, createGrpcServer, shutdownGrpcServer, type CallContext } from './grpc-server';
import { requireInternalCredential } from './internal-credential';
import { loadQuarryProto } from './proto';
import type { LoadOutcome, UploadChunk, UploadChunk__Output } from './generated/index';

const v1 = loadQuarryProto().quarry.v1;
const UPLOAD = v1.IngestService.service.UploadRecords;
const TOKEN = 'the-internal-token-of-this-test-deployment-0123456789';

type Behaviour = (messages: AsyncIterable<UploadChunk__Output>, ctx: CallContext) => Promise<LoadOutcome>;

const header = (index = 'sales'): UploadChunk => ({ header: { index, mode: 'replace', format: 'csv', gzip: false } });
const data = (bytes: Buffer | string): UploadChunk => ({ data: Buffer.from(bytes) });

/** Resolves with what `probe` returns once it is defined, or rejects after `ms`: a hang guard. */
async function eventually<T>(probe: () => T | undefined, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`nothing after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('callClientStream against a clientStreaming handler on a real grpc-js server', () => {
  const server = createGrpcServer();
  const log = silentLogger();
  let client: grpc.Client;
  // Each test says what the service does with the call; `handled` counts calls that reached it.
  let behave: Behaviour;
  let handled = 0;

  beforeAll(async () => {
    const implementation = {
      UploadRecords: clientStreaming<UploadChunk__Output, LoadOutcome>(log, 'UploadRecords', (messages, ctx) => {
        handled += 1;
        return behave(messages, ctx);
      }),
    };
    // As GrpcServiceModule serves it: the credential check in front of the handler.
    server.addService(
      v1.IngestService.service,
      requireInternalCredential(v1.IngestService.service, implementation, TOKEN, log),
    );
    const addr = await bindGrpcServer(server, '127.0.0.1:0');
    client = new grpc.Client(addr, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
  });

  afterAll(async () => {
    client.close();
    await shutdownGrpcServer(server, 1000);
  });

  const upload = (messages: AsyncIterable<UploadChunk>, internalToken = TOKEN) =>
    callClientStream('ingest', client, UPLOAD, messages, { requestId: 'req-up.1', deadlineMs: 60_000, internalToken });

  it('delivers every message in order and returns the answer', async () => {
    const received: string[] = [];
    let requestId = '';
    behave = async (messages, ctx) => {
      requestId = ctx.requestId;
      let index = '';
      for await (const m of messages) {
        if (m.part === 'header') index = m.header?.index ?? '';
        else received.push(m.data?.toString() ?? '');
      }
      return { index, loaded: received.length, rowsRead: received.length, version: 4 };
    };
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header('movies');
      for (let i = 0; i < 300; i++) yield data(`row ${i}\n`);
    }
    const res = await upload(source());
    expect(received).toEqual(Array.from({ length: 300 }, (_, i) => `row ${i}\n`));
    expect(res).toMatchObject({ index: 'movies', loaded: 300, rowsRead: 300, version: 4, failureCode: '' });
    expect(requestId).toBe('req-up.1');
  });

  it('rejects with the very AppError the source threw, and the handler sees the call cancelled', async () => {
    const thrown = new AppError(
      'PAYLOAD_TOO_LARGE',
      'The upload exceeds QUARRY_UPLOAD_MAX_MB (1 MB); nothing was published',
    );
    let seen: { received: number; aborted: boolean; reason: unknown } | undefined;
    behave = async (messages, ctx) => {
      let received = 0;
      try {
        for await (const _m of messages) received += 1;
      } catch {
        // How the messages stop on a cancelled call is grpc-js's business; the signal is the handler's.
      }
      // The cancellation reaches the signal a moment after the messages stop (grpc-js reads the peer's
      // RST_STREAM as the end of its messages first, and as a cancellation only once the stream closes).
      if (!ctx.signal.aborted) await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
      seen = { received, aborted: ctx.signal.aborted, reason: ctx.signal.reason };
      return {};
    };
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header();
      for (let i = 0; i < 3; i++) yield data(`row ${i}\n`);
      // Give the first messages time to arrive, so the handler is running when the source fails.
      await new Promise((r) => setTimeout(r, 100));
      throw thrown;
    }
    await expect(upload(source())).rejects.toBe(thrown);
    const saw = await eventually(() => seen);
    expect(saw.aborted).toBe(true);
    expect(saw.reason).toMatchObject({ code: 'TIMEOUT', detail: 'UploadRecords was cancelled by its caller' });
    // The header and the three pieces sent before the failure arrived; nothing after it.
    expect(saw.received).toBe(4);
  });

  it("rejects with the handler's FORBIDDEN and its detail", async () => {
    behave = async (messages) => {
      for await (const m of messages) {
        if (m.part === 'header')
          throw AppError.forbidden(`Index "${m.header?.index}" may be written only by its owner or an admin`);
      }
      return {};
    };
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header('payroll');
      for (let i = 0; i < 20; i++) yield data(Buffer.alloc(1024, i));
    }
    const err = await upload(source()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'FORBIDDEN',
      detail: 'Index "payroll" may be written only by its owner or an admin',
    });
  });

  it("cancels the call when the caller's signal aborts: the handler's signal aborts too", async () => {
    let aborted: unknown;
    const started = { yes: false };
    behave = async (messages, ctx) => {
      started.yes = true;
      // A handler that would wait for ever on its own: only the cancellation ends it.
      await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
      aborted = ctx.signal.reason;
      for await (const _m of messages) break;
      return {};
    };
    const caller = new AbortController();
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header();
      await eventually(() => (started.yes ? true : undefined));
      caller.abort();
      yield data('late\n');
    }
    const err = await callClientStream('ingest', client, UPLOAD, source(), {
      requestId: 'req-up.2',
      deadlineMs: 60_000,
      internalToken: TOKEN,
      signal: caller.signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(await eventually(() => aborted)).toMatchObject({
      code: 'TIMEOUT',
      detail: 'UploadRecords was cancelled by its caller',
    });
  });

  it('cancels the call when the caller goes away after the whole body was sent (a load under way)', async () => {
    let aborted: unknown;
    let bodyRead = false;
    behave = async (messages, ctx) => {
      for await (const _m of messages) void _m;
      bodyRead = true;
      // The load after the last byte: only the cancellation ends it.
      await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
      aborted = ctx.signal.reason;
      return { version: 1 };
    };
    const caller = new AbortController();
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header();
      yield data('a\n1\n');
    }
    const answered = callClientStream('ingest', client, UPLOAD, source(), {
      requestId: 'req-up.3',
      deadlineMs: 60_000,
      internalToken: TOKEN,
      signal: caller.signal,
    }).catch((e: unknown) => e);
    await eventually(() => (bodyRead ? true : undefined));
    caller.abort(AppError.timeout('The client went away before the upload was answered'));
    const err = await answered;
    // The caller's own reason, not "the service is unavailable".
    expect(err).toMatchObject({ code: 'TIMEOUT', detail: 'The client went away before the upload was answered' });
    expect(await eventually(() => aborted)).toMatchObject({
      code: 'TIMEOUT',
      detail: 'UploadRecords was cancelled by its caller',
    });
  });

  it('refuses a call without the right internal token as UNAUTHENTICATED, before the handler runs', async () => {
    const before = handled;
    behave = async () => ({ index: 'should not run' });
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header();
      yield data('row\n');
    }
    const err = await upload(source(), 'a-near-miss-of-the-real-internal-token-0123456789').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'UNAUTHENTICATED',
      detail: 'The internal credential is missing or wrong: services accept calls from the gateway only',
    });
    expect(handled).toBe(before);
  });

  it('slows the reading of the source to the pace of a slow handler (backpressure)', async () => {
    const TOTAL = 200;
    const SIZE = 256 * 1024;
    let received = 0;
    let pulled = 0;
    let maxLead = 0;
    const order: number[] = [];
    behave = async (messages) => {
      for await (const m of messages) {
        if (m.part !== 'data' || !m.data) continue;
        // A handler slower than loopback: writing to a busy disk, say.
        await new Promise((r) => setTimeout(r, 5));
        order.push(m.data.readUInt32BE(0));
        received += 1;
      }
      return { loaded: received };
    };
    async function* source(): AsyncGenerator<UploadChunk> {
      yield header();
      for (let i = 0; i < TOTAL; i++) {
        pulled += 1;
        maxLead = Math.max(maxLead, pulled - received);
        const piece = Buffer.alloc(SIZE);
        piece.writeUInt32BE(i, 0);
        yield { data: piece };
      }
    }
    const res = await upload(source());
    expect(res.loaded).toBe(TOTAL);
    expect(order).toEqual(Array.from({ length: TOTAL }, (_, i) => i));
    // What may be in flight is bounded by buffers (HTTP/2's window, the streams' high-water marks), not
    // by the source: without backpressure the source would be drained at once, a lead of all 200.
    expect(maxLead).toBeLessThan(TOTAL / 2);
  }, 120_000);
});

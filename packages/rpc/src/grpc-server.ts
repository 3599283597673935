import { FLOW_CONTROL_WINDOW } from './grpc-client';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@quarry/logger';
import { AppError } from '@quarry/errors';
import { extractTraceContext, failSpan, inSpan, SpanKind, tracingEnabled, type Span } from '@quarry/tracing';
import { toServiceError } from './grpc-errors';
import { REQUEST_ID_HEADER, resolveRequestId } from './request-id';

export interface CallContext {
  requestId: string;
  log: Logger;
  /**
   * Aborts when the caller's deadline passes or the caller goes away: long work (a DuckDB query)
   * listens to it and stops, so a call nobody waits for no longer holds a thread.
   */
  signal: AbortSignal;
}

/**
 * The signal a call's handler listens to: aborted when the caller's deadline passes or the caller goes
 * away. `settle` clears both once the handler is done.
 */
function callSignal(
  call: {
    getDeadline(): grpc.Deadline;
    once(event: 'cancelled', l: () => void): unknown;
    off(event: 'cancelled', l: () => void): unknown;
  },
  method: string,
): { signal: AbortSignal; settle: () => void } {
  const controller = new AbortController();
  const deadline = call.getDeadline();
  const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
  const timer = Number.isFinite(deadlineMs)
    ? setTimeout(
        () => controller.abort(AppError.timeout(`${method} ran past its deadline and was cancelled`)),
        Math.max(0, deadlineMs - Date.now()),
      )
    : undefined;
  const onCancelled = () => controller.abort(AppError.timeout(`${method} was cancelled by its caller`));
  call.once('cancelled', onCancelled);
  return {
    signal: controller.signal,
    settle: () => {
      clearTimeout(timer);
      call.off('cancelled', onCancelled);
    },
  };
}

export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/**
 * Adapts a use case to a grpc-js unary handler: request id from metadata into a child logger,
 * AppError out as a status. Everything thrown is caught here, so a handler cannot crash the process.
 */
export function unary<Req, Res>(
  log: Logger,
  method: string,
  handler: UnaryHandler<Req, Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const requestId = resolveRequestId(call.metadata.get(REQUEST_ID_HEADER)[0]);
    let child: Logger | undefined;
    const { signal, settle } = callSignal(call, method);
    // The child logger is made only when a line is written: most calls log nothing here.
    const ctx: CallContext = {
      requestId,
      get log() {
        child ??= log.child({ requestId, rpc: method });
        return child;
      },
      signal,
    };
    // A handler that throws synchronously is caught like one that rejects. Never rejects itself.
    const respond = (span?: Span): Promise<void> =>
      Promise.resolve()
        .then(() => handler(call.request, ctx))
        .then(
          (res) => {
            settle();
            span?.setAttribute('rpc.grpc.status_code', grpc.status.OK);
            callback(null, res);
          },
          (err: unknown) => {
            settle();
            const status = toServiceError(err);
            if (span) {
              failSpan(span, err, SpanKind.SERVER);
              span.setAttribute('rpc.grpc.status_code', status.code ?? grpc.status.UNKNOWN);
            }
            if (status.code === grpc.status.INTERNAL) ctx.log.error({ err }, 'rpc failed');
            else ctx.log.debug({ code: status.code, detail: status.details }, 'rpc refused');
            callback(status, null);
          },
        );
    if (!tracingEnabled()) {
      void respond();
      return;
    }
    // The server span continues the caller's trace (W3C traceparent in the metadata) and is active for
    // everything the handler does, its log lines and the calls it makes included.
    const path = call.getPath().slice(1);
    const slash = path.indexOf('/');
    const parent = extractTraceContext((key) => {
      const value = call.metadata.get(key)[0];
      return typeof value === 'string' ? value : undefined;
    });
    void inSpan(
      path,
      {
        kind: SpanKind.SERVER,
        parent,
        attributes: {
          'rpc.system': 'grpc',
          'rpc.service': path.slice(0, slash),
          'rpc.method': path.slice(slash + 1),
          'quarry.request_id': requestId,
        },
      },
      respond,
    );
  };
}

/** A handler of a method whose client streams: its messages as they come, one answer at the end. */
export type ClientStreamHandler<Req, Res> = (messages: AsyncIterable<Req>, ctx: CallContext) => Promise<Res>;

/**
 * Adapts a use case to a grpc-js client-streaming handler, as `unary` does a unary one: the request id
 * into a child logger, a signal that aborts when the caller goes away or its deadline passes, AppError
 * out as a status, everything thrown caught (the messages stop being read once the handler settles).
 */
export function clientStreaming<Req, Res>(
  log: Logger,
  method: string,
  handler: ClientStreamHandler<Req, Res>,
): grpc.handleClientStreamingCall<Req, Res> {
  return (call, callback) => {
    const requestId = resolveRequestId(call.metadata.get(REQUEST_ID_HEADER)[0]);
    const { signal, settle } = callSignal(call, method);
    const ctx: CallContext = { requestId, log: log.child({ requestId, rpc: method }), signal };
    void Promise.resolve()
      .then(() => handler(call as AsyncIterable<Req>, ctx))
      .then(
        (res) => callback(null, res),
        (err: unknown) => {
          const status = toServiceError(err);
          if (status.code === grpc.status.INTERNAL) ctx.log.error({ err }, 'rpc failed');
          else ctx.log.debug({ code: status.code, detail: status.details }, 'rpc refused');
          callback(status, null);
        },
      )
      .finally(() => {
        settle();
        // What the handler did not read is not waited for.
        call.destroy();
      });
  };
}

/**
 * Connections are closed (gracefully) after a few minutes: clients re-resolve DNS only when a connection
 * ends, so without this a gateway never spreads calls to pods added by a scale-up (round_robin over a
 * headless Service).
 */
export const MAX_CONNECTION_AGE_MS = 5 * 60_000;

export function createGrpcServer(): grpc.Server {
  return new grpc.Server({
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
    'grpc.max_connection_age_ms': MAX_CONNECTION_AGE_MS,
    'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW,
    // In-flight calls finish before the aged connection closes.
    'grpc.max_connection_age_grace_ms': 60_000,
  });
}

/** Binds and returns "host:port" with the port actually taken (port 0 picks a free one). */
export function bindGrpcServer(
  server: grpc.Server,
  addr: string,
  credentials = grpc.ServerCredentials.createInsecure(),
): Promise<string> {
  const host = addr.slice(0, addr.lastIndexOf(':'));
  return new Promise((resolve, reject) => {
    server.bindAsync(addr, credentials, (err, port) => {
      if (err) reject(err);
      else resolve(`${host}:${port}`);
    });
  });
}

/** Waits for in-flight calls up to graceMs, then forces the rest closed. */
export function shutdownGrpcServer(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

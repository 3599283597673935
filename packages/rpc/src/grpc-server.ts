import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@quarry/logger';
import { AppError } from '@quarry/errors';
import { toServiceError } from './grpc-errors';
import { REQUEST_ID_HEADER, resolveRequestId } from './request-id';

export interface CallContext {
  requestId: string;
  log: Logger;
}

export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/**
 * Adapts a use case to a grpc-js unary handler: request id from metadata into a child logger,
 * AppError out as a status. Everything thrown is caught here, so a handler cannot crash the process.
 */
export function unary<Req, Res>(log: Logger, method: string, handler: UnaryHandler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const requestId = resolveRequestId(call.metadata.get(REQUEST_ID_HEADER)[0]);
    let child: Logger | undefined;
    // The child logger is made only when a line is written: most calls log nothing here.
    const ctx: CallContext = {
      requestId,
      get log() {
        child ??= log.child({ requestId, rpc: method });
        return child;
      },
    };
    handler(call.request, ctx).then(
      (res) => callback(null, res),
      (err: unknown) => {
        const status = toServiceError(err);
        if (status.code === grpc.status.INTERNAL) ctx.log.error({ err }, 'rpc failed');
        else ctx.log.debug({ code: status.code, detail: status.details }, 'rpc refused');
        callback(status, null);
      },
    );
  };
}

export function createGrpcServer(): grpc.Server {
  return new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.max_send_message_length': 64 * 1024 * 1024 });
}

/** Binds and returns "host:port" with the port actually taken (port 0 picks a free one). */
export function bindGrpcServer(server: grpc.Server, addr: string): Promise<string> {
  const host = addr.slice(0, addr.lastIndexOf(':'));
  return new Promise((resolve, reject) => {
    server.bindAsync(addr, grpc.ServerCredentials.createInsecure(), (err, port) => {
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

/** The handler of an RPC whose feature has not landed: it says so plainly, never fakes data. */
export function notImplemented<Req, Res>(log: Logger, rpc: string, method: string): grpc.handleUnaryCall<Req, Res> {
  return unary(log, rpc, async () => {
    throw new AppError('NOT_IMPLEMENTED', `${method} is not available yet`);
  });
}

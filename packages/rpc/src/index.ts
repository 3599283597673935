export * as grpc from '@grpc/grpc-js';
export { loadQuarryProto, PROTO_ROOT, type QuarryProto } from './proto';
export { REQUEST_ID_HEADER, resolveRequestId, isSafeRequestId } from './request-id';
export { toServiceError, fromServiceError, ERROR_CODE_METADATA } from './grpc-errors';
export {
  unary,
  clientStreaming,
  createGrpcServer,
  bindGrpcServer,
  shutdownGrpcServer,
  type CallContext,
  type UnaryHandler,
  type ClientStreamHandler,
} from './grpc-server';
export {
  callUnary,
  callClientStream,
  CLIENT_OPTIONS,
  dialTarget,
  type CallOptions,
  type ClientStreamMethod,
  type UnaryMethod,
} from './grpc-client';
export {
  INTERNAL_TOKEN_HEADER,
  channelCredentials,
  serverCredentials,
  requireInternalCredential,
  makeCredentialCheck,
  type GrpcTls,
  type GrpcTrust,
} from './internal-credential';
export type * as pb from './generated/index';
export { GrpcServiceModule, LIVENESS_SERVICE, type GrpcServiceOptions } from './module';
export { callerFromWire, callerToWire } from './caller';

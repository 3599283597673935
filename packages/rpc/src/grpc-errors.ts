import * as grpc from '@grpc/grpc-js';
import { AppError, ERROR_TABLE, codeFromGrpcStatus, isErrorCode, toAppError } from '@quarry/errors';

export const ERROR_CODE_METADATA = 'quarry-error-code';

/** AppError → gRPC status; the stable code rides in trailing metadata so the gateway gets it back exactly. */
export function toServiceError(err: unknown): Partial<grpc.StatusObject> {
  const app = toAppError(err);
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_METADATA, app.code);
  return { code: ERROR_TABLE[app.code].grpc, details: app.detail, metadata };
}

/** gRPC failure → AppError; transport faults become UNAVAILABLE naming the service. */
export function fromServiceError(err: unknown, service: string): AppError {
  const e = err as Partial<grpc.ServiceError>;
  const sent = e.metadata?.get(ERROR_CODE_METADATA)[0];
  if (typeof sent === 'string' && isErrorCode(sent)) {
    return new AppError(sent, e.details ?? 'Internal error');
  }
  const code = codeFromGrpcStatus(typeof e.code === 'number' ? e.code : grpc.status.UNKNOWN);
  if (code === 'UNAVAILABLE') return AppError.unavailable(`The ${service} service is unavailable; try again shortly`, err);
  if (code === 'TIMEOUT') return new AppError('TIMEOUT', `The ${service} service did not answer in time`, { cause: err });
  return AppError.internal('Internal error', err);
}

import * as grpc from '@grpc/grpc-js';
import { AppError, ERROR_TABLE, codeFromGrpcStatus, isErrorCode, toAppError } from '@quarry/errors';

export const ERROR_CODE_METADATA = 'quarry-error-code';
export const RETRY_AFTER_METADATA = 'quarry-retry-after';

/**
 * Status details travel in an HTTP/2 trailer; a trailer past the peer's header limit is never delivered
 * and the call hangs until its deadline (a huge field name echoed in an error once turned a 400 into a
 * 504). Details are cut well below that limit, whatever a message quotes.
 */
export const MAX_DETAIL_BYTES = 8 * 1024;

function capDetail(detail: string): string {
  if (Buffer.byteLength(detail) <= MAX_DETAIL_BYTES) return detail;
  return `${Buffer.from(detail)
    .subarray(0, MAX_DETAIL_BYTES - 100)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}… (message cut)`;
}

/** AppError → gRPC status; the stable code rides in trailing metadata so the gateway gets it back exactly. */
export function toServiceError(err: unknown): Partial<grpc.StatusObject> {
  const app = toAppError(err);
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_CODE_METADATA, app.code);
  if (app.retryAfterSeconds !== undefined) metadata.set(RETRY_AFTER_METADATA, String(app.retryAfterSeconds));
  return { code: ERROR_TABLE[app.code].grpc, details: capDetail(app.detail), metadata };
}

/** gRPC failure → AppError; transport faults become UNAVAILABLE naming the service. */
export function fromServiceError(err: unknown, service: string): AppError {
  const e = err as Partial<grpc.ServiceError>;
  const sent = e.metadata?.get(ERROR_CODE_METADATA)[0];
  if (typeof sent === 'string' && isErrorCode(sent)) {
    const retry = Number(e.metadata?.get(RETRY_AFTER_METADATA)[0]);
    return new AppError(
      sent,
      e.details ?? 'Internal error',
      Number.isFinite(retry) && retry > 0 ? { retryAfterSeconds: retry } : undefined,
    );
  }
  const code = codeFromGrpcStatus(typeof e.code === 'number' ? e.code : grpc.status.UNKNOWN);
  if (code === 'UNAVAILABLE')
    return AppError.unavailable(`The ${service} service is unavailable; try again shortly`, err);
  if (code === 'TIMEOUT')
    return new AppError('TIMEOUT', `The ${service} service did not answer in time`, { cause: err });
  return AppError.internal('Internal error', err);
}

import { ERROR_TABLE, type ErrorCode } from './error-table';

/**
 * The one error type of Quarry. Domain code throws it with a stable string code; the edges
 * (gRPC status, JSON-RPC business error) translate it through ERROR_TABLE and nowhere else.
 * `detail` is shown to the client, so it must never carry secrets or stack traces.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;

  constructor(code: ErrorCode, detail: string, options?: { cause?: unknown }) {
    super(detail, options);
    this.name = 'AppError';
    this.code = code;
    this.detail = detail;
  }

  get httpStatus(): number {
    return ERROR_TABLE[this.code].http;
  }

  static invalid(detail: string): AppError {
    return new AppError('INVALID_ARGUMENT', detail);
  }
  static notFound(detail: string): AppError {
    return new AppError('NOT_FOUND', detail);
  }
  static forbidden(detail: string): AppError {
    return new AppError('FORBIDDEN', detail);
  }
  static conflict(detail: string): AppError {
    return new AppError('CONFLICT', detail);
  }
  static internal(detail: string, cause?: unknown): AppError {
    return new AppError('INTERNAL', detail, { cause });
  }
  static unavailable(detail: string, cause?: unknown): AppError {
    return new AppError('UNAVAILABLE', detail, { cause });
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** Any thrown value as an AppError; what is not one already is an internal fault. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return AppError.internal('Internal error', err);
}

import { ERROR_TABLE, type ErrorCode } from './error-table';

/**
 * The one error type of Quarry. Domain code throws it with a stable string code; the edges
 * (gRPC status, JSON-RPC business error) translate it through ERROR_TABLE and nowhere else.
 * `detail` is shown to the client, so it must never carry secrets or stack traces.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  /**
   * For refusals that pass by themselves (an overloaded process, a lock another holds for now): when a
   * retry may succeed (HTTP Retry-After). Absent: retrying the same call will not help.
   */
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, detail: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.detail = detail;
    this.retryAfterSeconds = options?.retryAfterSeconds;
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
  /** Refused for load, not for a fault: the client should retry after `retryAfterSeconds`. */
  static overloaded(detail: string, retryAfterSeconds: number): AppError {
    return new AppError('UNAVAILABLE', detail, { retryAfterSeconds });
  }
  /** CONFLICT with something another holds for now (a load lock): the same call may pass after a while. */
  static busy(detail: string, retryAfterSeconds: number): AppError {
    return new AppError('CONFLICT', detail, { retryAfterSeconds });
  }
  static timeout(detail: string, cause?: unknown): AppError {
    return new AppError('TIMEOUT', detail, { cause });
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

/** What work cancelled by an AbortSignal rejects with: its reason when that is an AppError (a deadline), else a 504. */
export function abortReason(signal: AbortSignal): AppError {
  return signal.reason instanceof AppError
    ? signal.reason
    : AppError.timeout('The call was cancelled before it finished');
}

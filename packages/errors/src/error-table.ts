/**
 * The single mapping table between Quarry's stable error codes, HTTP-style business codes
 * (docs/api.md "Error codes") and gRPC status codes (numeric values of grpc.status, kept here
 * so this package needs no gRPC dependency).
 */
export const ERROR_TABLE = {
  INVALID_ARGUMENT: { http: 400, title: 'Bad Request', grpc: 3 },
  UNAUTHENTICATED: { http: 401, title: 'Unauthorized', grpc: 16 },
  FORBIDDEN: { http: 403, title: 'Forbidden', grpc: 7 },
  NOT_FOUND: { http: 404, title: 'Not Found', grpc: 5 },
  CONFLICT: { http: 409, title: 'Conflict', grpc: 6 },
  PAYLOAD_TOO_LARGE: { http: 413, title: 'Payload Too Large', grpc: 8 },
  // Answered by the gateway itself, before any service: these never cross gRPC, their statuses only keep
  // the table one-to-one.
  REQUEST_TIMEOUT: { http: 408, title: 'Request Timeout', grpc: 11 },
  RATE_LIMITED: { http: 429, title: 'Too Many Requests', grpc: 10 },
  // An upload's body in a format no loader reads (POST /indexes/<name>/records).
  UNSUPPORTED_MEDIA_TYPE: { http: 415, title: 'Unsupported Media Type', grpc: 12 },
  INTERNAL: { http: 500, title: 'Internal Server Error', grpc: 13 },
  UNAVAILABLE: { http: 503, title: 'Service Unavailable', grpc: 14 },
  TIMEOUT: { http: 504, title: 'Gateway Timeout', grpc: 4 },
} as const satisfies Record<string, { http: number; title: string; grpc: number }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

export function isErrorCode(value: string): value is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_TABLE, value);
}

/** The code a gRPC status maps back to when the peer sent no Quarry code (a foreign server, a transport fault). */
export function codeFromGrpcStatus(status: number): ErrorCode {
  if (status === 14) return 'UNAVAILABLE';
  if (status === 4) return 'TIMEOUT';
  if (status === 1) return 'UNAVAILABLE'; // CANCELLED: the peer went away mid-call
  const hit = ERROR_CODES.find((c) => ERROR_TABLE[c].grpc === status);
  return hit ?? 'INTERNAL';
}

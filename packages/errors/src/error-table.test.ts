import { AppError, ERROR_CODES, ERROR_TABLE, codeFromGrpcStatus, toAppError, toJsonRpcBusinessError } from './index';

describe('error table', () => {
  it('maps every code to a distinct gRPC status so a round trip is lossless', () => {
    const statuses = ERROR_CODES.map((c) => ERROR_TABLE[c].grpc);
    expect(new Set(statuses).size).toBe(statuses.length);
    for (const code of ERROR_CODES) expect(codeFromGrpcStatus(ERROR_TABLE[code].grpc)).toBe(code);
  });

  it('renders the business error shape of docs/api.md "Error codes"', () => {
    expect(toJsonRpcBusinessError(AppError.invalid('index is required'))).toEqual({
      code: 400,
      message: 'Bad Request',
      data: { type: 'about:blank', detail: 'index is required' },
    });
    expect(toJsonRpcBusinessError(AppError.conflict('x')).code).toBe(409);
  });

  it('treats foreign throwables as internal faults without leaking their text', () => {
    const e = toAppError(new Error('secret path /etc/passwd'));
    expect(e.code).toBe('INTERNAL');
    expect(e.detail).toBe('Internal error');
  });

  it('maps unknown gRPC statuses to INTERNAL and transport ones to UNAVAILABLE', () => {
    expect(codeFromGrpcStatus(2)).toBe('INTERNAL');
    expect(codeFromGrpcStatus(14)).toBe('UNAVAILABLE');
  });
});

export { AppError, abortReason, isAppError, toAppError } from './app-error';
export { ERROR_TABLE, ERROR_CODES, codeFromGrpcStatus, isErrorCode, type ErrorCode } from './error-table';
export { toJsonRpcBusinessError, type BusinessErrorBody } from './json-rpc-error';
export { quoteInput, quoteList, unpairedSurrogateAt, MAX_QUOTED_CHARS } from './quote-input';

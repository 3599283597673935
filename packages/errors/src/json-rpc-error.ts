import type { AppError } from './app-error';
import { ERROR_TABLE } from './error-table';

export interface BusinessErrorBody {
  code: number;
  message: string;
  data: { type: 'about:blank'; detail: string };
}

/** The JSON-RPC error of a business error: code is the HTTP-style status, data is {type, detail}. */
export function toJsonRpcBusinessError(err: AppError): BusinessErrorBody {
  const row = ERROR_TABLE[err.code];
  return { code: row.http, message: row.title, data: { type: 'about:blank', detail: err.detail } };
}

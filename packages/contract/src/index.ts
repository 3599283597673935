export * from './limits';
export * from './scopes';
export type { Caller } from './caller';
export * from './chart-names';
export * from './param-schemas';
export * from './result-schemas';
export * from './methods';
export { parseParams } from './parse-params';
export { openRpcDocument, type OpenRpcDocument } from './openrpc-document';

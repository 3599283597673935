export * from './schema';
export * from './query-node';
export { parseQuery, MAX_QUERY_DEPTH, type ParseOptions } from './parse-query';
export { parseDateValue, type DateValue, type DatePrecision } from './date-values';
export { mayRead, indexNotFound, restrictedQuery, type Reader } from './access';

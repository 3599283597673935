export * from './schema';
export * from './query-node';
export {
  parseQuery,
  checkQuerySyntax,
  countClauses,
  MAX_QUERY_DEPTH,
  MAX_QUERY_CLAUSES,
  type ParseOptions,
} from './parse-query';
export { parseDateValue, MIN_DATE_MS, MAX_DATE_MS, type DateValue, type DatePrecision } from './date-values';
export { mayRead, isRestricted, indexNotFound, restrictedQuery, restrictedTree, type Reader } from './access';
export { escapeQueryText, fieldPrefix } from './query-literals';
export * from './relevance';
export { MAX_FUZZY_EDITS, MAX_BOOST } from './query-lexer';
export { highlightRecords, highlightText, highlightPatterns } from './highlight';

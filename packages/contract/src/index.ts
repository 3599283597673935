export * from './limits';
export * from './scopes';
export type { Caller } from './caller';
export type { ChartNumberFormat, CrosstabGrid } from './crosstab-grid';
export type { CacheStatus, Provenance, VerifyOutcome } from './result-meta';
export * from './chart-names';
export * from './chart-formatters';
export * from './param-schemas';
export * from './result-schemas';
export * from './methods';
export * from './params/export-params';
export * from './params/source-params';
export * from './params/identity-params';
export {
  FORMAT_LOCALE,
  intlOptions,
  type ColorScale,
  type Highlight,
  type TotalFormat,
  type TotalLook,
} from './params/total-look';
export {
  CALENDAR_GROUPS,
  compareLabel,
  comparePeriod,
  type CalendarGroup,
  type CompareAs,
  type CompareTo,
  type TotalCompare,
} from './params/total-compare';
export { parseParams, MAX_PARAM_PROBLEMS } from './parse-params';
export { inlinedDocument, openRpcDocument, type OpenRpcDocument } from './openrpc-document';
export * from './complete-params';
export * from './formula';
export * from './internal-wire';
export * from './alert-types';

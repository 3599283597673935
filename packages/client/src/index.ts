export {
  QuarryClient,
  NEVER_RETRIED,
  type QuarryClientOptions,
  type CallOptions,
  type CrosstabMethods,
  type CrosstabHtmlResult,
  type CrosstabJsonResult,
  type CrosstabCsvResult,
  type CrosstabXlsxResult,
  type CrosstabChartResult,
  type CrosstabPdfResult,
  type CrosstabChartPdfResult,
  type CrosstabEChartsResult,
  type ResponseMeta,
  type ExportDownload,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from './quarry-client';
export { reviveChartOption, type EChartsOptionJson, type ReviveOptions } from './chart-option';
export { QuarryError, type QuarryTransportCode } from './quarry-error';
export type * from './contract-types.generated';
export { AGGREGATIONS, SHOW_AS } from './contract-types.generated';

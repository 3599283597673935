export {
  QuarryClient,
  type QuarryClientOptions,
  type CallOptions,
  type CrosstabMethods,
  type CrosstabHtmlResult,
  type CrosstabJsonResult,
  type CrosstabCsvResult,
  type CrosstabXlsxResult,
  type CrosstabChartResult,
  type ResponseMeta,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from './quarry-client';
export { QuarryError, type QuarryTransportCode } from './quarry-error';
export type * from './contract-types.generated';

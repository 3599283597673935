export {
  QuarryClient,
  type QuarryClientOptions,
  type ResponseMeta,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from './quarry-client';
export { QuarryError } from './quarry-error';
export type * from './contract-types.generated';

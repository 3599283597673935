import type { CheckedParamsOf, MethodName, ResultOf } from '@quarry/contract';
import type { Caller, RequestTrace } from './service-clients.port';

export type SourceMethod = Extract<MethodName, `SOURCES.${string}`>;

/**
 * SOURCES.* as the ingest service answers them. Adapters guarantee: the params go as the contract parsed
 * them and come back checked by the same schema there; only the calling token's hash travels (runs run
 * with its rights), never the token; refusals reject with the ingest service's AppError.
 */
export interface SourceCalls {
  callSources<M extends SourceMethod>(
    method: M,
    caller: Caller,
    tokenHash: string,
    params: CheckedParamsOf<M>,
    trace: RequestTrace,
  ): Promise<ResultOf<M>>;
}

import type { CacheStatus, MethodName, Provenance, VerifyOutcome } from '@quarry/contract';
import type { Caller, RequestTrace } from '../../ports/service-clients.port';
import type { CompleteParams, SentParams } from '../method-params';
import type { Principal } from '../principal';

/** A method's result and what goes into `meta` beside the request id. */
export interface MethodResult {
  data: unknown;
  /** How the result cache answered, for the methods it serves (QUERIES.EXECUTE, CROSSTAB.EXECUTE). */
  cache?: CacheStatus;
  /** CROSSTAB.EXECUTE and a crosstab report's REPORTS.EXECUTE: the rollup that answered instead of a scan of the records. */
  servedBy?: string;
  /** For the audit trail: records (searches), cells (crosstab tables) or items (listings) returned. */
  returned?: number;
  /** Which data gave the answer, for the methods that run on an index version. */
  provenance?: Provenance;
  /** A token QUERIES.REPLAY answers the same data for. */
  replay?: string;
  /** With verify: true. */
  verify?: VerifyOutcome;
}

/** One call as it reaches its handler: the embed grant, the scopes and the params are checked already. */
export interface MethodCall<M extends MethodName> {
  principal: Principal;
  /** The principal as the services see it. */
  caller: Caller;
  /** The params as sent (what a saved report records). */
  sent: SentParams<M>;
  /** The params with every default of the contract applied (what the services take). */
  complete: CompleteParams<M>;
  trace: RequestTrace;
}

/** What one method does once its call has passed the pipeline's checks. */
export interface MethodHandler<M extends MethodName> {
  /**
   * Throws when this gateway cannot serve the method at all (a part it needs is not configured), before
   * the params are parsed: the caller learns that first.
   */
  checkAvailable?(): void;
  handle(call: MethodCall<M>): Promise<MethodResult>;
}

/** Exactly one handler per method of the contract: a method without one does not compile. */
export type MethodHandlers = { readonly [M in MethodName]: MethodHandler<M> };

/** What a search or crosstab answer returned, as the audit trail counts it; nothing for a chart. */
export function returnedOf(data: Record<string, unknown>): number | undefined {
  const n = (k: string) => (typeof data[k] === 'number' ? (data[k] as number) : undefined);
  const [total, page, pageSize] = [n('total'), n('page'), n('pageSize')];
  if (total !== undefined && page !== undefined && pageSize !== undefined)
    return Math.max(0, Math.min(pageSize, total - (page - 1) * pageSize));
  const [rows, columns] = [n('rowCount'), n('columnCount')];
  return rows !== undefined && columns !== undefined ? rows * columns : undefined;
}

import {
  completeCrosstabExecute,
  completeIndexesFind,
  completeQueriesExecute,
  completeQueriesReplay,
  completeReportsExecute,
  completeReportsFind,
  completeReportsSchedule,
  completeSourcesCreate,
  completeSourcesRuns,
  completeSourcesUpdate,
  completeTokensCreate,
  completeUsersCreate,
  METHODS,
  parseParams,
  type MethodName,
} from '@quarry/contract';
import type { z } from 'zod';

/** A method's params as its contract schema parsed them: what the caller sent, checked. */
export type SentParams<M extends MethodName> = z.output<(typeof METHODS)[M]['params']>;

/** Methods whose params have no default to apply take them as they were sent. */
const asSent = <T>(p: T): T => p;

/**
 * Each method's completion: the contract's complete-params function, which applies every default. Listed
 * for every method (`satisfies` makes a missing one a compile error), so no method skips the step.
 */
const COMPLETE = {
  'QUERIES.EXECUTE': completeQueriesExecute,
  'QUERIES.REPLAY': completeQueriesReplay,
  'INDEXES.FIND': completeIndexesFind,
  'CROSSTAB.EXECUTE': completeCrosstabExecute,
  'REPORTS.FIND': completeReportsFind,
  'REPORTS.METADATA': asSent<SentParams<'REPORTS.METADATA'>>,
  'REPORTS.EXECUTE': completeReportsExecute,
  'REPORTS.UPDATE': asSent<SentParams<'REPORTS.UPDATE'>>,
  'REPORTS.DELETE': asSent<SentParams<'REPORTS.DELETE'>>,
  'REPORTS.SCHEDULE': completeReportsSchedule,
  'REPORTS.SCHEDULES': asSent<SentParams<'REPORTS.SCHEDULES'>>,
  'REPORTS.UNSCHEDULE': asSent<SentParams<'REPORTS.UNSCHEDULE'>>,
  'TOKENS.EMBED': asSent<SentParams<'TOKENS.EMBED'>>,
  'TOKENS.REVOKE_EMBED': asSent<SentParams<'TOKENS.REVOKE_EMBED'>>,
  'TOKENS.WHOAMI': asSent<SentParams<'TOKENS.WHOAMI'>>,
  'EXPORTS.START': asSent<SentParams<'EXPORTS.START'>>,
  'EXPORTS.STATUS': asSent<SentParams<'EXPORTS.STATUS'>>,
  'SOURCES.CREATE': completeSourcesCreate,
  'SOURCES.FIND': asSent<SentParams<'SOURCES.FIND'>>,
  'SOURCES.UPDATE': completeSourcesUpdate,
  'SOURCES.DELETE': asSent<SentParams<'SOURCES.DELETE'>>,
  'SOURCES.RUN': asSent<SentParams<'SOURCES.RUN'>>,
  'SOURCES.RUNS': completeSourcesRuns,
  'USERS.CREATE': completeUsersCreate,
  'USERS.UPDATE': asSent<SentParams<'USERS.UPDATE'>>,
  'USERS.FIND': asSent<SentParams<'USERS.FIND'>>,
  'USERS.DISABLE': asSent<SentParams<'USERS.DISABLE'>>,
  'USERS.ENABLE': asSent<SentParams<'USERS.ENABLE'>>,
  'USERS.DELETE': asSent<SentParams<'USERS.DELETE'>>,
  'TOKENS.CREATE': completeTokensCreate,
  'TOKENS.FIND': asSent<SentParams<'TOKENS.FIND'>>,
  'TOKENS.REVOKE': asSent<SentParams<'TOKENS.REVOKE'>>,
} satisfies { readonly [M in MethodName]: (p: SentParams<M>) => unknown };

/** A method's params with every default of the contract applied. */
export type CompleteParams<M extends MethodName> = ReturnType<(typeof COMPLETE)[M]>;

/** Both forms: services take the complete one, a saved report records the one sent. */
export interface ReadParams<M extends MethodName> {
  sent: SentParams<M>;
  complete: CompleteParams<M>;
}

/**
 * The schema and complete steps of a call: the params parsed with the method's contract schema (every
 * problem named, under `at` when they are nested in another param), then completed.
 */
export function readParams<M extends MethodName>(
  method: M,
  params: Record<string, unknown>,
  at?: string,
): ReadParams<M> {
  const sent = parseParams(METHODS[method].params, params, at) as SentParams<M>;
  // TypeScript does not relate COMPLETE[M] to M's own types for a generic M; the `satisfies` above does.
  const completeOf = COMPLETE[method] as unknown as (p: SentParams<M>) => CompleteParams<M>;
  const complete = completeOf(sent);
  return { sent, complete };
}

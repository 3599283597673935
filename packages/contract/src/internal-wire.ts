import { AppError } from '@quarry/errors';
import type { z } from 'zod';
import {
  completeCrosstabExecute,
  completeIndexesFind,
  completeQueriesExecute,
  completeReportsFind,
  type CompleteCrosstabExecute,
  type CompleteIndexesFind,
  type CompletePivot,
  type CompleteQueriesExecute,
  type CompleteReportsFind,
} from './complete-params';
import { parseParams } from './parse-params';
import { crosstabExecuteParams, indexesFindParams, queriesExecuteParams, reportsFindParams } from './param-schemas';

/*
 * How the gateway hands a method's completed params to the service that runs it: one JSON payload,
 * written and read by the functions below on both sides, so a new parameter travels without any wire
 * message, mapping or default of its own. Completed params are valid params (every default is a value
 * the schema accepts), so the service validates them with the very schema the gateway validated the
 * caller's with, and completes them again only to type them: completion changes nothing in completed
 * params (the codec's test holds it to that), so the service applies no default of its own.
 */

/** Encodes a method's completed params for the wire, and reads them back on the service's side. */
export interface ParamsCodec<T> {
  encode(params: T): string;
  /** Rejects with INVALID_ARGUMENT, naming every problem, as the gateway would have. */
  decode(json: string): T;
}

/** What the query service searches: the completed params without how one call uses the cache. */
export type CompleteSearch = Omit<CompleteQueriesExecute, 'cache' | 'saveReport'>;

function parsedJson(json: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw AppError.invalid('params_json is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw AppError.invalid('params_json must hold a JSON object');
  return value as Record<string, unknown>;
}

/** The pivot alone: how it is drawn, cached and saved go with the call, not in the params. */
function pivotOf(p: CompletePivot | CompleteCrosstabExecute): CompletePivot {
  const {
    output: _output,
    cache: _cache,
    verify: _verify,
    saveReport: _saveReport,
    ...pivot
  } = p as CompleteCrosstabExecute;
  return pivot;
}

function searchOf(p: CompleteSearch | CompleteQueriesExecute): CompleteSearch {
  const { cache: _cache, saveReport: _saveReport, ...search } = p as CompleteQueriesExecute;
  return search;
}

function codec<T, S extends z.ZodType>(
  schema: S,
  complete: (parsed: z.output<S>) => T,
  strip: (params: T) => T,
): ParamsCodec<T> {
  return {
    encode: (params) => JSON.stringify(strip(params)),
    decode: (json) => strip(complete(parseParams(schema, parsedJson(json)))),
  };
}

/** CROSSTAB.EXECUTE's pivot, from the gateway to the crosstab service. */
export const pivotParamsCodec: ParamsCodec<CompletePivot> = codec(
  crosstabExecuteParams,
  completeCrosstabExecute,
  pivotOf,
);

/** QUERIES.EXECUTE's search, from the gateway to the query service. */
export const searchParamsCodec: ParamsCodec<CompleteSearch> = codec(
  queriesExecuteParams,
  completeQueriesExecute,
  searchOf,
);

const whole = <T>(params: T): T => params;

/** INDEXES.FIND, from the gateway to the query service. */
export const indexesFindParamsCodec: ParamsCodec<CompleteIndexesFind> = codec(
  indexesFindParams,
  completeIndexesFind,
  whole,
);

/** REPORTS.FIND, from the gateway to the reports service. */
export const reportsFindParamsCodec: ParamsCodec<CompleteReportsFind> = codec(
  reportsFindParams,
  completeReportsFind,
  whole,
);

import { z } from 'zod';
import { AppError, quoteList } from '@quarry/errors';

/*
 * The JSON shapes of each method's params (DESIGN.md "API decisions"). The gateway owns the contract's
 * types and ranges; services own what needs data (does the index or field exist, does the query parse).
 * Every string has a length cap, so a hostile megabyte is a fast 400 here instead of travelling to a
 * service (a gRPC status detail quoting it overflows the HTTP/2 trailers and the call then hangs until
 * its deadline).
 *
 * Messages say `{param}` where the parameter goes: parseParams puts the issue's exact path there
 * (`sort[2].field`), which no message written per schema can know.
 */

const INT32_MAX = 2_147_483_647;
/** Index names are 1-64 characters (INDEX_NAME in @quarry/snapshots); a longer one cannot exist. */
export const INDEX_NAME_MAX = 64;
/** Field names as files bring them; generous, yet small enough to quote and compare cheaply. */
export const FIELD_NAME_MAX = 500;
export const QUERY_MAX_LENGTH = 10_000;
/** Longer than any keyword the services accept (asc, desc, aggregation types, report types, guids). */
const KEYWORD_MAX = 100;
/** The detail names at most this many issues: one per parameter is enough to fix a request. */
const MAX_ISSUES = 5;

const PARAM = '{param}';

const string = (max: number, what = 'a string') =>
  z.string({ error: `${PARAM} must be ${what}` }).max(max, { error: `${PARAM} must be at most ${max} characters` });

const requiredString = (max: number) =>
  z
    .string({ error: `${PARAM} is required` })
    .max(max, { error: `${PARAM} must be at most ${max} characters` })
    .refine((v) => v.trim() !== '', { error: `${PARAM} is required` });

const optionalString = (max: number) => string(max).optional();

const optionalBoolean = () => z.boolean({ error: `${PARAM} must be a boolean` }).optional();

const intInRange = (min: number, max: number) => {
  const error = `${PARAM} must be an integer between ${min} and ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).optional();
};

const arrayOf = <T extends z.ZodType>(item: T, max: number) =>
  z.array(item, { error: `${PARAM} must be an array` }).max(max, { error: `${PARAM} may have at most ${max} items` });

const saveReport = z.strictObject(
  {
    name: z
      .string({ error: `${PARAM} is required` })
      .trim()
      .min(1, { error: `${PARAM} is required` })
      .max(200, { error: `${PARAM} must be at most 200 characters` }),
    description: optionalString(2000),
    folder: optionalString(200),
    shared: z.boolean({ error: `${PARAM} must be a boolean` }).optional(),
  },
  { error: `${PARAM} must be an object` },
);

const sortItem = z.strictObject(
  {
    field: requiredString(FIELD_NAME_MAX),
    direction: z
      .string({ error: `${PARAM} must be "asc" or "desc"` })
      .max(KEYWORD_MAX, { error: `${PARAM} must be "asc" or "desc"` })
      .optional(),
  },
  { error: `${PARAM} must be an object with field and direction` },
);

export const queriesExecuteParams = z.strictObject({
  index: requiredString(INDEX_NAME_MAX),
  query: optionalString(QUERY_MAX_LENGTH),
  page: intInRange(1, INT32_MAX),
  pageSize: intInRange(1, 1000),
  sort: arrayOf(sortItem, 16).optional(),
  /** false skips the result cache for this call; not an executable param, so never saved in a report. */
  cache: optionalBoolean(),
  saveReport: saveReport.optional(),
});

export const indexesFindParams = z.strictObject({
  searchText: optionalString(200),
  cursor: optionalString(1000),
  limit: intInRange(1, 200),
});

const columnItem = z.strictObject(
  {
    field: requiredString(FIELD_NAME_MAX),
    reverse: z.boolean({ error: `${PARAM} must be a boolean` }).optional(),
  },
  { error: `${PARAM} must be an object with field and reverse` },
);

/** One of a fixed set of words; any other value is a 400 listing them. */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `${PARAM} must be one of ${values.map((v) => `"${v}"`).join(', ')}` });

export const SHOW_AS = ['value', 'percentOfGrandTotal', 'percentOfRowTotal', 'percentOfColumnTotal'] as const;
export const CROSSTAB_FORMATS = ['html', 'json', 'csv'] as const;
export const AXIS_LIMIT_MAX = 10_000;

const totalItem = z.strictObject(
  {
    aggregationType: requiredString(KEYWORD_MAX),
    field: optionalString(FIELD_NAME_MAX),
    dynamicView: optionalString(FIELD_NAME_MAX),
    name: optionalString(500),
    showAs: oneOf(SHOW_AS).optional(),
  },
  { error: `${PARAM} must be an object with aggregationType and field or dynamicView` },
);

const axisOrder = z.strictObject(
  {
    by: oneOf(['label', 'value']),
    measure: z.number({ error: `${PARAM} must be an index into totals` }).int({ error: `${PARAM} must be an index into totals` }).min(0, { error: `${PARAM} must be an index into totals` }).optional(),
    direction: oneOf(['asc', 'desc']).optional(),
  },
  { error: `${PARAM} must be an object with by ("label" or "value"), measure and direction` },
);

export const crosstabExecuteParams = z
  .strictObject({
    index: requiredString(INDEX_NAME_MAX),
    query: optionalString(QUERY_MAX_LENGTH),
    rows: arrayOf(string(FIELD_NAME_MAX, 'a field name'), 8).min(1, { error: `${PARAM} must name at least one field` }),
    columns: arrayOf(columnItem, 8).optional(),
    totals: arrayOf(totalItem, 16).min(1, { error: `${PARAM} must have at least one item` }),
    subtotals: optionalBoolean(),
    rowOrder: axisOrder.optional(),
    columnOrder: axisOrder.optional(),
    rowLimit: intInRange(1, AXIS_LIMIT_MAX),
    columnLimit: intInRange(1, AXIS_LIMIT_MAX),
    format: oneOf(CROSSTAB_FORMATS).optional(),
    chartType: optionalString(KEYWORD_MAX),
    imageFormat: optionalString(KEYWORD_MAX),
    width: intInRange(100, 4000),
    height: intInRange(100, 4000),
    /** false skips the result cache for this call; not an executable param, so never saved in a report. */
    cache: optionalBoolean(),
    saveReport: saveReport.optional(),
  })
  .superRefine((p, ctx) => {
    // Rules across parameters, each named by its own path.
    for (const name of ['rowOrder', 'columnOrder'] as const) {
      const measure = p[name]?.measure;
      if (measure !== undefined && measure >= p.totals.length) {
        ctx.addIssue({ code: 'custom', path: [name, 'measure'], message: `${PARAM} must be an index into totals, from 0 to ${p.totals.length - 1}` });
      }
    }
    if (p.format !== undefined && p.chartType !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['format'], message: `${PARAM} is for tables; a chart (chartType) takes imageFormat instead` });
    }
  });

export const reportsFindParams = z.strictObject({
  search: optionalString(200),
  types: arrayOf(string(KEYWORD_MAX), 10).optional(),
  cursor: optionalString(1000),
  limit: intInRange(1, 200),
});

export const reportsMetadataParams = z.strictObject({
  guid: requiredString(KEYWORD_MAX),
});

export type QueriesExecuteParams = z.output<typeof queriesExecuteParams>;
export type IndexesFindParams = z.output<typeof indexesFindParams>;
export type CrosstabExecuteParams = z.output<typeof crosstabExecuteParams>;
export type ReportsFindParams = z.output<typeof reportsFindParams>;
export type ReportsMetadataParams = z.output<typeof reportsMetadataParams>;

/** `sort[2].field` from zod's ["sort", 2, "field"]. */
function paramName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)), '');
}

/**
 * Parses params or throws one 400 naming every offending parameter. Unknown keys are the caller's text,
 * so they are quoted, cut short and counted past ten: the detail stays small whatever arrives.
 */
export function parseParams<T extends z.ZodType>(schema: T, params: Record<string, unknown>): z.output<T> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.slice(0, MAX_ISSUES).map((issue) => {
    const name = paramName(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const where = name ? ` in ${name}` : '';
      return `Unknown parameter${issue.keys.length > 1 ? 's' : ''}${where}: ${quoteList(issue.keys)}`;
    }
    return issue.message.split(PARAM).join(name || 'params');
  });
  throw AppError.invalid([...new Set(details)].join('; '));
}

import { z } from 'zod';
import { AppError } from '@quarry/errors';

/*
 * The JSON shapes of each method's params (DESIGN.md "API decisions"). The gateway owns the contract's
 * types and ranges; services own what needs data (does the index or field exist, does the query parse).
 */

const INT32_MAX = 2_147_483_647;

const requiredString = (name: string) =>
  z.string({ error: `${name} is required` }).refine((v) => v.trim() !== '', { error: `${name} is required` });

const optionalString = (name: string, max: number) =>
  z.string({ error: `${name} must be a string` }).max(max, { error: `${name} must be at most ${max} characters` }).optional();

const intInRange = (name: string, min: number, max: number) =>
  z
    .number({ error: `${name} must be an integer between ${min} and ${max}` })
    .int({ error: `${name} must be an integer between ${min} and ${max}` })
    .min(min, { error: `${name} must be an integer between ${min} and ${max}` })
    .max(max, { error: `${name} must be an integer between ${min} and ${max}` })
    .optional();

const arrayOf = <T extends z.ZodType>(name: string, item: T, max: number) =>
  z.array(item, { error: `${name} must be an array` }).max(max, { error: `${name} may have at most ${max} items` });

const saveReport = z.strictObject(
  {
    name: z
      .string({ error: 'saveReport.name is required' })
      .trim()
      .min(1, { error: 'saveReport.name is required' })
      .max(200, { error: 'saveReport.name must be at most 200 characters' }),
    description: optionalString('saveReport.description', 2000),
    folder: optionalString('saveReport.folder', 200),
    shared: z.boolean({ error: 'saveReport.shared must be a boolean' }).optional(),
  },
  { error: 'saveReport must be an object' },
);

const sortItem = z.strictObject(
  {
    field: requiredString('sort[].field'),
    direction: z.string({ error: 'sort[].direction must be "asc" or "desc"' }).optional(),
  },
  { error: 'sort items must be objects with field and direction' },
);

export const QUERY_MAX_LENGTH = 10_000;

export const queriesExecuteParams = z.strictObject({
  index: requiredString('index'),
  query: optionalString('query', QUERY_MAX_LENGTH),
  page: intInRange('page', 1, INT32_MAX),
  pageSize: intInRange('pageSize', 1, 1000),
  sort: arrayOf('sort', sortItem, 16).optional(),
  saveReport: saveReport.optional(),
});

export const indexesFindParams = z.strictObject({
  searchText: optionalString('searchText', 200),
  cursor: optionalString('cursor', 1000),
  limit: intInRange('limit', 1, 200),
});

const columnItem = z.strictObject(
  {
    field: requiredString('columns[].field'),
    reverse: z.boolean({ error: 'columns[].reverse must be a boolean' }).optional(),
  },
  { error: 'columns items must be objects with field and reverse' },
);

const totalItem = z.strictObject(
  {
    aggregationType: requiredString('totals[].aggregationType'),
    field: optionalString('totals[].field', 500),
    dynamicView: optionalString('totals[].dynamicView', 500),
    name: optionalString('totals[].name', 500),
  },
  { error: 'totals items must be objects with aggregationType and field or dynamicView' },
);

export const crosstabExecuteParams = z.strictObject({
  index: requiredString('index'),
  query: optionalString('query', QUERY_MAX_LENGTH),
  rows: arrayOf('rows', z.string({ error: 'rows must be an array of field names' }), 8).min(1, { error: 'rows must name at least one field' }),
  columns: arrayOf('columns', columnItem, 8).optional(),
  totals: arrayOf('totals', totalItem, 16).min(1, { error: 'totals must have at least one item' }),
  chartType: optionalString('chartType', 100),
  width: intInRange('width', 100, 4000),
  height: intInRange('height', 100, 4000),
  saveReport: saveReport.optional(),
});

export const reportsFindParams = z.strictObject({
  search: optionalString('search', 200),
  types: arrayOf('types', z.string({ error: 'types must be an array of strings' }), 10).optional(),
  cursor: optionalString('cursor', 1000),
  limit: intInRange('limit', 1, 200),
});

export const reportsMetadataParams = z.strictObject({
  guid: requiredString('guid'),
});

export type QueriesExecuteParams = z.output<typeof queriesExecuteParams>;
export type IndexesFindParams = z.output<typeof indexesFindParams>;
export type CrosstabExecuteParams = z.output<typeof crosstabExecuteParams>;
export type ReportsFindParams = z.output<typeof reportsFindParams>;
export type ReportsMetadataParams = z.output<typeof reportsMetadataParams>;

/** Parses params or throws one 400 naming every offending parameter. */
export function parseParams<T extends z.ZodType>(schema: T, params: Record<string, unknown>): z.output<T> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.slice(0, 5).map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.length ? ` in ${issue.path.join('.')}` : '';
      return `Unknown parameter${issue.keys.length > 1 ? 's' : ''}${where}: ${issue.keys.join(', ')}`;
    }
    return issue.message;
  });
  throw AppError.invalid([...new Set(details)].join('; '));
}

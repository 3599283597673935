import { z } from 'zod';
import { oneOf, PARAM } from './param-builders';

/** What an export may run: a search, a crosstab, or a saved report. */
export const EXPORT_METHODS = ['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE', 'REPORTS.EXECUTE'] as const;
export type ExportMethod = (typeof EXPORT_METHODS)[number];

/** The file formats an export writes. */
export const EXPORT_FORMATS = ['csv', 'jsonl', 'parquet', 'xlsx', 'pdf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_STATES = ['queued', 'running', 'done', 'failed'] as const;
export type ExportState = (typeof EXPORT_STATES)[number];

/**
 * An export's id as the server hands it out: 32 lower-case hex digits. Anything else is refused before
 * it comes near a file name.
 */
export const EXPORT_ID_PATTERN = /^[0-9a-f]{32}$/;

export const exportsStartParams = z
  .strictObject({
    method: oneOf(EXPORT_METHODS).meta({ description: 'The method whose whole answer is exported.' }),
    params: z.record(z.string(), z.unknown(), { error: `${PARAM} must be an object` }).meta({
      description:
        'That method’s params, checked as that method checks them, without saveReport (and for a crosstab without format or imageFormat: `format` says how it is written; chartType only with format pdf). A search exports every matching record in its sort: `page` and `pageSize` are ignored.',
    }),
    format: oneOf(EXPORT_FORMATS).meta({
      description:
        'A search: csv (text a spreadsheet would run as a formula gets a leading apostrophe), jsonl (one record a line), parquet or xlsx (a header row of the fields, a new sheet every 1,048,575 records). A crosstab: csv or xlsx (its table as CROSSTAB.EXECUTE renders it), jsonl (one row of cells a line, then a line of the column and grand totals) or pdf (as CROSSTAB.EXECUTE format pdf prints it: the table on A4 with its header rows on every page and page numbers, at most 20,000 cells; with chartType the chart on one page). A saved crosstab report as its table, and as pdf a report saved as a chart prints its chart. pdf is for crosstabs only.',
    }),
  })
  .meta({ title: 'ExportsStartParams' });

export const exportsStatusParams = z
  .strictObject({
    exportId: z
      .string({ error: `${PARAM} must be a string` })
      .max(64, { error: `${PARAM} is not an export id` })
      .regex(EXPORT_ID_PATTERN, { error: `${PARAM} is not an export id` })
      .meta({ description: 'The id EXPORTS.START returned.' }),
  })
  .meta({ title: 'ExportsStatusParams' });

export const exportsStartResult = z
  .strictObject({
    exportId: z.string().meta({ description: 'Ask EXPORTS.STATUS with it; download at GET /exports/<exportId>.' }),
  })
  .meta({ title: 'ExportsStartResult' });

export const exportsStatusResult = z
  .strictObject({
    state: z.enum(EXPORT_STATES),
    rowsWritten: z.number().meta({ description: 'Records (or table rows) written so far.' }),
    bytes: z.number().meta({ description: 'The file’s size so far.' }),
    error: z.string().optional().meta({ description: 'Why it failed (state "failed").' }),
    expiresAt: z
      .string()
      .optional()
      .meta({ description: 'When the file is deleted (ISO-8601 UTC; state "done"); after it, the download is a 410.' }),
  })
  .meta({ title: 'ExportsStatusResult' });

export type ExportsStartParams = z.input<typeof exportsStartParams>;
export type ExportsStatusParams = z.input<typeof exportsStatusParams>;
export type ExportsStartResult = z.output<typeof exportsStartResult>;
export type ExportsStatusResult = z.output<typeof exportsStatusResult>;

import { totalLookParams } from './params/total-look';
import { compareEcho, compareTableParts, partialRowFlag } from './params/total-compare';
import { z } from 'zod';
import { AGGREGATIONS, ALERT_ON, FILTER_OPS, PARAMETER_KINDS, REPORT_TYPES, SCHEDULE_FORMATS, SHOW_AS } from './limits';

/*
 * What each method returns in `result.data` (docs/api.md shows them per method). The gateway builds these from the
 * services' answers; the OpenRPC document and the typed client are generated from them, and the e2e
 * tests check real answers against them.
 */

const field = z.object({
  name: z.string(),
  type: z.string().meta({ description: 'string, number, integer, boolean or date' }),
});
const reportRef = z.object({ guid: z.string() }).meta({ description: 'Present when saveReport was given.' });
const cursor = z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last one.' });

export const queriesExecuteResult = z
  .object({
    index: z.string(),
    query: z.string(),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int().meta({ description: 'Records matching the query (every page).' }),
    totalPages: z.number().int(),
    fields: z.array(field),
    records: z
      .array(z.record(z.string(), z.unknown()))
      .meta({ description: 'The page, each record keyed by field name (the realm-filtered fields only).' }),
    scores: z.array(z.number()).optional().meta({
      description:
        "Present when the search ranked (words, phrases or fuzzy words and no sort) or sorted by _score: each record's BM25 score, aligned with records.",
    }),
    highlights: z
      .array(z.record(z.string(), z.string()))
      .optional()
      .meta({ description: 'With highlight: per record, field → fragment; fields without a match are left out.' }),
    facets: z
      .array(
        z.object({
          field: z.string(),
          values: z.array(z.object({ value: z.union([z.string(), z.number(), z.boolean()]), count: z.number().int() })),
          others: z.number().int().meta({ description: 'Matching records whose value is not listed.' }),
        }),
      )
      .optional()
      .meta({ description: 'With facets: one per facet asked for, in that order.' }),
    report: reportRef.optional(),
  })
  .meta({ title: 'QueriesExecuteResult' });

export const indexInfo = z.object({
  name: z.string(),
  description: z.string(),
  recordCount: z.number().int(),
  fields: z.array(field),
  dynamicViews: z.array(z.string()),
  updatedAt: z.string().meta({ description: 'ISO 8601 time of the last load.' }),
});

export const indexesFindResult = z
  .object({ indexes: z.array(indexInfo), nextCursor: cursor })
  .meta({ title: 'IndexesFindResult' });

const counts = {
  rowCount: z.number().int(),
  columnCount: z.number().int(),
};
const omitted = {
  rowsOmitted: z
    .number()
    .int()
    .optional()
    .meta({ description: 'Outermost row values cut by rowLimit (present when a limit was given).' }),
  columnsOmitted: z.number().int().optional(),
  rowsFilteredOut: z
    .number()
    .int()
    .optional()
    .meta({ description: 'Outermost row groups rowFilter left out (present when a filter was given).' }),
  columnsFilteredOut: z.number().int().optional(),
};

const axisKey = z.array(z.union([z.string(), z.number(), z.boolean(), z.null()]));
const measureValues = z
  .array(z.number().nullable())
  .meta({ description: 'One value per measure; null where no record falls.' });

export const crosstabJsonTable = z.object({
  rowFields: z.array(z.string()),
  columnFields: z.array(z.string()),
  measures: z.array(
    z.object({
      name: z.string(),
      aggregationType: z.enum(AGGREGATIONS).optional().meta({ description: 'Absent for a calculated total.' }),
      field: z.string().optional(),
      dynamicView: z.string().optional(),
      percentile: z.number().optional(),
      formula: z.string().optional(),
      showAs: z.enum(SHOW_AS),
      ...totalLookParams,
      ...compareEcho,
    }),
  ),
  columns: z.array(axisKey),
  columnQueries: z.array(z.string().nullable()).meta({
    description:
      'Per entry of columns: a query (Quarry query language) selecting exactly the records of that column key, whatever it holds (blanks, backslashes, quotes; a repeating date part as Field:@dayOfWeek=n).',
  }),
  rows: z.array(
    z.object({
      key: axisKey,
      query: z.string().optional().meta({
        description:
          'Selects exactly the records of this row key: (crosstab query) AND row query AND column query is the cell.',
      }),
      cells: z.array(measureValues),
      total: measureValues,
      subtotal: z.literal(true).optional(),
      other: z.number().int().optional().meta({
        description:
          'The "Other (N)" row (otherRow): its key is [], N the outermost row values it stands for; its query selects exactly their records.',
      }),
      ...partialRowFlag,
    }),
  ),
  otherColumn: z.number().int().optional().meta({
    description:
      'With otherColumn: the last entry of columns (key []) is "Other (N)", over the records of the N outermost column values not shown.',
  }),
  columnTotals: z.array(measureValues),
  grandTotal: measureValues,
  rowsOmitted: z.number().int(),
  columnsOmitted: z.number().int(),
  rowsFilteredOut: z.number().int(),
  columnsFilteredOut: z.number().int(),
  ...compareTableParts,
});

export const crosstabExecuteResult = z
  .union([
    z.object({
      contentType: z.literal('text/html'),
      data: z.string().meta({ description: 'An escaped, accessible <table>.' }),
      ...counts,
      ...omitted,
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.literal('application/json'),
      data: crosstabJsonTable,
      ...counts,
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.literal('text/csv'),
      data: z.string(),
      ...counts,
      ...omitted,
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.literal('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'),
      data: z.string().meta({ description: 'The .xlsx file as base64: one sheet named after the index.' }),
      ...counts,
      ...omitted,
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.literal('application/pdf'),
      data: z.string().meta({
        description:
          'The table printed as a .pdf file, base64: A4, landscape when wide, the header rows on every page, the index and query atop each page and "Page N of M" at its foot.',
      }),
      ...counts,
      ...omitted,
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.literal('application/json'),
      data: z.record(z.string(), z.unknown()).meta({
        description:
          'imageFormat echarts: the ECharts option the PNG and SVG are drawn from (plain JSON, planned for width × height). Where Quarry prints numbers compactly or in a total’s format, a setting names its formatter under quarryFormatter (compact, compactValue; number and numberValue with quarryNumberFormat, Intl options, and quarryScale), which ECharts ignores; @quarry/client reviveChartOption sets those formatters.',
      }),
      width: z.number().int(),
      height: z.number().int(),
      chartType: z.string(),
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.enum(['image/png', 'image/svg+xml']),
      data: z.string().meta({ description: 'PNG as base64, or the SVG document.' }),
      width: z.number().int(),
      height: z.number().int(),
      chartType: z.string(),
      report: reportRef.optional(),
    }),
    z.object({
      contentType: z.literal('application/pdf'),
      data: z
        .string()
        .meta({ description: 'format pdf with chartType: the chart on one page of its size, a .pdf as base64.' }),
      width: z.number().int(),
      height: z.number().int(),
      chartType: z.string(),
      report: reportRef.optional(),
    }),
  ])
  .meta({ title: 'CrosstabExecuteResult' });

export const reportSummary = z.object({
  guid: z.string(),
  name: z.string(),
  description: z.string(),
  type: z.enum(REPORT_TYPES),
  index: z.string(),
  owner: z.string(),
  folder: z.string(),
  shared: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const reportsFindResult = z
  .object({ reports: z.array(reportSummary), nextCursor: cursor })
  .meta({ title: 'ReportsFindResult' });

const indexVersion = z
  .number()
  .int()
  .meta({ description: 'The version of the index (its snapshot) the report ran on; 0 when not known.' });

export const reportVersionInfo = z.object({
  version: z.number().int(),
  savedAt: z.string().meta({ description: 'ISO 8601 time this version was saved.' }),
  indexVersion: z
    .number()
    .int()
    .meta({ description: 'The index version current when it was saved (what asOf "saved" runs on); 0: not known.' }),
});

/** A declared parameter as saved, with its field's type (what a form asks for). */
export const reportParameter = z.object({
  name: z.string(),
  field: z.string(),
  fieldType: z.string().meta({
    description: "The field's type when the parameter was declared: string, number, integer, boolean or date.",
  }),
  kind: z.enum(PARAMETER_KINDS),
  default: z
    .union([
      z.array(z.union([z.string(), z.number(), z.boolean()])),
      z.object({
        from: z.union([z.string(), z.number()]).optional(),
        to: z.union([z.string(), z.number()]).optional(),
      }),
    ])
    .optional(),
  required: z.boolean(),
});

export const reportsMetadataResult = reportSummary
  .extend({
    method: z.enum(['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE']),
    params: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The executable params: call `method` with them to run the report again.' }),
    version: z.number().int().meta({ description: 'The version returned (the latest unless one was asked for).' }),
    versions: z.array(reportVersionInfo).meta({ description: 'Every version of the report, oldest first.' }),
    indexVersion: reportVersionInfo.shape.indexVersion,
    parameters: z.array(reportParameter).meta({
      description: 'The parameters this version declares (REPORTS.EXECUTE `parameters`); [] when none.',
    }),
  })
  .meta({ title: 'ReportsMetadataResult' });

export const reportsScheduleResult = z
  .object({
    scheduleId: z.string(),
    secret: z.string().nullable().meta({
      description:
        'The webhook signing secret (`whsec_` and a base64 key), shown this once: deliveries carry Standard Webhooks signatures (webhook-id, webhook-timestamp, webhook-signature) any standardwebhooks library verifies with it; null for e-mail.',
    }),
  })
  .meta({ title: 'ReportsScheduleResult' });

export const DELIVERY_OUTCOMES = ['delivered', 'retrying', 'failed', 'stopped', 'skipped'] as const;

const delivery = z.object({
  runAt: z.string().meta({ description: 'The scheduled time of the run this attempt belongs to.' }),
  attempt: z.number().int().meta({ description: '1 for the first try of a run, up to 5.' }),
  at: z.string().meta({ description: 'When the attempt ended.' }),
  outcome: z.enum(DELIVERY_OUTCOMES).meta({
    description:
      'delivered; retrying (this try failed, another follows with backoff); failed (the last try failed); stopped (the schedule was stopped, see stoppedReason); skipped (an alert whose condition did not hold, or whose matches had not changed: nothing was sent).',
  }),
  httpStatus: z
    .number()
    .int()
    .nullable()
    .meta({ description: "The webhook receiver's HTTP status, when it answered." }),
  detail: z.string().meta({ description: 'Why an attempt failed; empty when delivered.' }),
  idempotencyKey: z.string().meta({ description: 'The same for every try of one run (Idempotency-Key header).' }),
});

export const scheduleSummary = z.object({
  scheduleId: z.string(),
  guid: z.string(),
  cron: z.string(),
  timeZone: z.string(),
  format: z.enum(SCHEDULE_FORMATS),
  deliver: z.union([
    z.object({ webhook: z.object({ url: z.string() }) }),
    z.object({ email: z.object({ to: z.array(z.string()) }) }),
  ]),
  status: z.enum(['active', 'stopped']),
  stoppedReason: z.string().nullable().meta({
    description: 'Why deliveries stopped: the report was deleted or became unreadable, or its owner was revoked.',
  }),
  createdAt: z.string(),
  nextRunAt: z.string().nullable(),
  deliveries: z.array(delivery).meta({ description: 'The last delivery attempts, newest first (each try recorded).' }),
  when: z
    .object({
      total: z.union([z.number().int(), z.string()]),
      op: z.enum(FILTER_OPS),
      value: z.number(),
      on: z.enum(ALERT_ON),
      onlyOnChange: z.boolean(),
    })
    .nullable()
    .meta({ description: 'The alert condition (REPORTS.SCHEDULE when); null for a plain schedule.' }),
});

export const reportsSchedulesResult = z
  .object({ schedules: z.array(scheduleSummary) })
  .meta({ title: 'ReportsSchedulesResult' });

export const reportsUnscheduleResult = z
  .object({ scheduleId: z.string(), removed: z.literal(true) })
  .meta({ title: 'ReportsUnscheduleResult' });
const runRef = z
  .object({ guid: z.string(), version: z.number().int() })
  .meta({ description: 'The report and the version of it that ran.' });
const ran = { report: runRef, indexVersion };

const [html, json, csv, xlsx, echarts, image] = crosstabExecuteResult.options;

/** What the report's method returns (QUERIES.EXECUTE's or CROSSTAB.EXECUTE's data), and what ran. */
export const reportsExecuteResult = z
  .union([
    queriesExecuteResult.omit({ report: true }).extend(ran),
    html.omit({ report: true }).extend(ran),
    json.omit({ report: true }).extend(ran),
    csv.omit({ report: true }).extend(ran),
    xlsx.omit({ report: true }).extend(ran),
    echarts.omit({ report: true }).extend(ran),
    image.omit({ report: true }).extend(ran),
  ])
  .meta({ title: 'ReportsExecuteResult' });

/** What the replayed method returned then: QUERIES.EXECUTE's or CROSSTAB.EXECUTE's data, without a saved report. */
export const queriesReplayResult = z
  .union([
    queriesExecuteResult.omit({ report: true }),
    html.omit({ report: true }),
    json.omit({ report: true }),
    csv.omit({ report: true }),
    xlsx.omit({ report: true }),
    echarts.omit({ report: true }),
    image.omit({ report: true }),
  ])
  .meta({ title: 'QueriesReplayResult' });

export const reportsUpdateResult = reportsMetadataResult.meta({ title: 'ReportsUpdateResult' });

export const reportsDeleteResult = z
  .object({
    guid: z.string(),
    restorableUntil: z.string().meta({
      description:
        'ISO 8601 time until which an operator can bring it back with `quarry report restore` (QUARRY_REPORT_TRASH_DAYS).',
    }),
  })
  .meta({ title: 'ReportsDeleteResult' });

export const tokensEmbedResult = z
  .strictObject({
    token: z.string().meta({
      description: 'A signed bearer token (JWT) for a browser: Authorization: Bearer <token>. Shown once.',
    }),
    id: z.string().meta({
      description: 'The token’s id (its JWT jti): what TOKENS.REVOKE_EMBED and the audit trail name it by.',
    }),
    expiresAt: z.string().meta({ description: 'When it stops working (ISO-8601 UTC).' }),
  })
  .meta({ title: 'TokensEmbedResult' });

export const tokensRevokeEmbedResult = z
  .strictObject({
    id: z.string(),
    revokedAt: z.string().meta({ description: 'When it was first revoked (ISO-8601 UTC): revoking again keeps it.' }),
    expiresAt: z.string().meta({ description: 'When it would have stopped working anyway (ISO-8601 UTC).' }),
  })
  .meta({ title: 'TokensRevokeEmbedResult' });

export const tokensWhoamiResult = z
  .strictObject({
    user: z.string().meta({ description: 'The name of the user the token belongs to.' }),
    admin: z.boolean().meta({ description: 'Whether the user reads every index without realms.' }),
    indexes: z
      .array(z.string())
      .meta({ description: 'The indexes the user may read (`*`: every index); an admin reads them all.' }),
    realms: z
      .array(z.strictObject({ index: z.string(), query: z.string() }))
      .meta({ description: 'Queries ANDed into every call of the user on that index: what the user sees of it.' }),
    scopes: z.array(z.string()).meta({ description: 'What this token may do.' }),
    token: z
      .strictObject({
        id: z.string().meta({ description: 'The token’s id, as `quarry token list` shows it.' }),
        prefix: z.string().meta({ description: 'The first characters of the token, to tell tokens apart.' }),
        expiresAt: z
          .string()
          .nullable()
          .meta({ description: 'When the token stops working (ISO-8601 UTC); null: it does not expire.' }),
      })
      .meta({ description: 'The token that made the call.' }),
  })
  .meta({ title: 'TokensWhoamiResult' });

export type TokensEmbedResult = z.output<typeof tokensEmbedResult>;
export type TokensWhoamiResult = z.output<typeof tokensWhoamiResult>;
export type TokensRevokeEmbedResult = z.output<typeof tokensRevokeEmbedResult>;
export type QueriesExecuteResult = z.output<typeof queriesExecuteResult>;
export type IndexesFindResult = z.output<typeof indexesFindResult>;
export type CrosstabExecuteResult = z.output<typeof crosstabExecuteResult>;
export type CrosstabJsonTable = z.output<typeof crosstabJsonTable>;
export type ReportsFindResult = z.output<typeof reportsFindResult>;
export type ReportsMetadataResult = z.output<typeof reportsMetadataResult>;
export type ReportParameter = z.output<typeof reportParameter>;
export type ReportsScheduleResult = z.output<typeof reportsScheduleResult>;
export type ReportsSchedulesResult = z.output<typeof reportsSchedulesResult>;
export type ReportsUnscheduleResult = z.output<typeof reportsUnscheduleResult>;
export type ScheduleSummary = z.output<typeof scheduleSummary>;
export type DeliveryRecord = z.output<typeof delivery>;
export type ReportsExecuteResult = z.output<typeof reportsExecuteResult>;
export type ReportsUpdateResult = z.output<typeof reportsUpdateResult>;
export type ReportsDeleteResult = z.output<typeof reportsDeleteResult>;
export type ReportVersionInfo = z.output<typeof reportVersionInfo>;

/*
 * Every limit and default of the API in one place: the gateway validates with them, the services take
 * theirs from here, and the OpenRPC document states them. Change one here and all three follow.
 */

export const INT32_MAX = 2_147_483_647;

/** Index names are 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const INDEX_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const INDEX_NAME_MAX = 64;
/** Field names as files bring them; generous, yet small enough to quote and compare cheaply. */
export const FIELD_NAME_MAX = 500;
export const QUERY_MAX_LENGTH = 10_000;
/**
 * The longest replay token (QUERIES.REPLAY): the call's params, compressed and signed. An answer whose
 * token would be longer carries none (a crosstab at every cap at once).
 */
export const REPLAY_TOKEN_MAX = 16_384;
/** Longer than any keyword the services accept (asc, desc, aggregation types, report types, guids). */
export const KEYWORD_MAX = 100;
export const CURSOR_MAX = 1000;
export const SEARCH_TEXT_MAX = 200;

export const DEFAULT_PAGE = 1;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
export const MAX_SORT_KEYS = 16;
/** `sort` may name it beside fields: the record's relevance score (docs/search.md). */
export const SCORE_FIELD = '_score';
export const MAX_FACETS = 16;
export const DEFAULT_FACET_LIMIT = 10;
export const MAX_FACET_LIMIT = 1000;
export const MAX_HIGHLIGHT_FIELDS = 64;
export const DEFAULT_FRAGMENT_SIZE = 150;
export const MIN_FRAGMENT_SIZE = 20;
export const MAX_FRAGMENT_SIZE = 2000;

export const DEFAULT_INDEX_LIMIT = 50;
export const MAX_INDEX_LIMIT = 200;
export const DEFAULT_REPORT_LIMIT = 50;
export const MAX_REPORT_LIMIT = 200;
export const MAX_REPORT_TYPES = 10;

export const REPORT_NAME_MAX = 200;
export const REPORT_DESCRIPTION_MAX = 2000;
export const REPORT_FOLDER_MAX = 200;
export const REPORT_TYPES = ['query', 'crosstab'] as const;
/** REPORTS.EXECUTE `asOf`: the index as it is now, or the snapshot the report version was saved on. */
export const AS_OF = ['latest', 'saved'] as const;
export const DEFAULT_AS_OF = 'latest';

export const MAX_AXIS_FIELDS = 8;
export const MAX_TOTALS = 16;
export const TOTAL_NAME_MAX = 500;
export const AXIS_LIMIT_MAX = 10_000;
/** A crosstab as drawn (cells, totals and subtotals) may have at most this many cells. */
export const MAX_CROSSTAB_CELLS = 100_000;

export const AGGREGATIONS = [
  'Sum',
  'Count',
  'Average',
  'Min',
  'Max',
  'Median',
  'Percentile',
  'StdDev',
  'CountDistinct',
] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
/** Aggregations of a numeric field's values (Count and CountDistinct take any field). */
export const NUMERIC_AGGREGATIONS: readonly Aggregation[] = [
  'Sum',
  'Average',
  'Min',
  'Max',
  'Median',
  'Percentile',
  'StdDev',
];
export const SHOW_AS = [
  'value',
  'percentOfGrandTotal',
  'percentOfRowTotal',
  'percentOfColumnTotal',
  'runningTotal',
  'differenceFromPrevious',
  'percentDifferenceFromPrevious',
  'percentOfParentRow',
  'percentOfParentColumn',
  'rankInColumn',
  'rankInRow',
  'movingAverage',
] as const;
/** movingAverage's `window`: how many keys (the key and those before it along the axis) it averages. */
export const MOVING_AVERAGE_WINDOW_MIN = 2;
export const MOVING_AVERAGE_WINDOW_MAX = 100;
/** An axis's manual `order`: at most this many values, each a key as JSON gives it. */
export const AXIS_ORDER_MAX = 1000;
export const AXIS_ORDER_VALUE_MAX = 1000;
export type ShowAs = (typeof SHOW_AS)[number];
/** The showAs that write a total as a percentage (a style for money or a unit cannot write those). */
export const PERCENT_SHOW_AS: ReadonlySet<ShowAs> = new Set([
  'percentOfGrandTotal',
  'percentOfRowTotal',
  'percentOfColumnTotal',
  'percentDifferenceFromPrevious',
  'percentOfParentRow',
  'percentOfParentColumn',
]);
export const CROSSTAB_FORMATS = ['html', 'json', 'csv', 'xlsx', 'pdf'] as const;
/**
 * A table printed as PDF: at most this many cells (rows × columns of the table as drawn). Past it the
 * file runs to hundreds of pages nobody prints, and Chromium's layout time grows with it; xlsx or an
 * export carries such a table.
 */
export const PDF_MAX_CELLS = 20_000;
/** Where a table puts its totals: a column per total under each column, or a row per total under each row. */
export const TOTALS_ON = ['columns', 'rows'] as const;
export type TotalsOn = (typeof TOTALS_ON)[number];
export type CrosstabFormat = (typeof CROSSTAB_FORMATS)[number];
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
/** How a date axis groups its values; each key is a sortable string (docs/api.md, CROSSTAB.EXECUTE). */
export const DATE_GROUPS = [
  'year',
  'quarter',
  'month',
  'week',
  'day',
  'hour',
  'monthOfYear',
  'dayOfWeek',
  'hourOfDay',
] as const;
export type DateGroup = (typeof DATE_GROUPS)[number];
export const FILTER_OPS = ['>', '>=', '<', '<=', '=', '!='] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
export const DEFAULT_TIME_ZONE = 'UTC';
export const TIME_ZONE_MAX = 64;

export const CHART_SIZE_MIN = 100;
export const CHART_SIZE_MAX = 4000;
export const DEFAULT_CHART_WIDTH = 800;
export const DEFAULT_CHART_HEIGHT = 600;

/** TOKENS.EMBED: an embed token lives at most a day. */
export const EMBED_TTL_MAX_SECONDS = 86_400;

// Schedules (REPORTS.SCHEDULE): what a delivery can carry, and how much a caller may ask for.
/**
 * Every output a delivery can carry: a crosstab's table format (pdf included) or an image of a report saved
 * as a chart; a search's every matching record as csv, xlsx, parquet, jsonl or json.
 */
export const SCHEDULE_FORMATS = ['html', 'json', 'csv', 'xlsx', 'pdf', 'png', 'svg', 'parquet', 'jsonl'] as const;
export type ScheduleFormat = (typeof SCHEDULE_FORMATS)[number];
export const CRON_MAX = 120;
export const WEBHOOK_URL_MAX = 2000;
export const MAX_EMAIL_RECIPIENTS = 20;
/** RFC 5321's limit on a forward path. */
export const EMAIL_ADDRESS_MAX = 254;
/** Delivery attempts each schedule keeps and REPORTS.SCHEDULES lists, newest first. */
export const SCHEDULE_DELIVERIES_KEPT = 20;
/** REPORTS.SCHEDULE `when.on`: a condition on any row's total, or on the grand total. */
export const ALERT_ON = ['anyRow', 'grandTotal'] as const;
export type AlertOn = (typeof ALERT_ON)[number];
/** Matching rows an alert delivery lists (the table itself is delivered whole). */
export const ALERT_ROWS_MAX = 1000;

// Report parameters (saveReport.parameters, REPORTS.EXECUTE parameters, TOKENS.EMBED parameters).
/** How a parameter filters: a list of values (any of them), or a {from, to} range (both ends included). */
export const PARAMETER_KINDS = ['values', 'range'] as const;
export type ParameterKind = (typeof PARAMETER_KINDS)[number];
export const MAX_REPORT_PARAMETERS = 16;
/** A parameter's name: a letter, then letters, digits or "_" (it is a JSON key in every call). */
export const PARAMETER_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const PARAMETER_NAME_MAX = 64;
/** Values one parameter may take in one call (ORed). */
export const MAX_PARAMETER_VALUES = 100;
/** A text value (or a date's text) of a parameter. */
export const PARAMETER_TEXT_MAX = 1000;
/** The locked parameters an embed token carries, as JSON: they travel in every call's Authorization header. */
export const EMBED_PARAMETERS_JSON_MAX = 4096;

import type { z } from 'zod';
import type { ImageFormat } from './chart-names';
import * as L from './limits';
import type {
  crosstabExecuteParams,
  indexesFindParams,
  queriesExecuteParams,
  queriesReplayParams,
  reportsExecuteParams,
  reportsFindParams,
  reportsScheduleParams,
  saveReportParam,
} from './param-schemas';
import { headerNamedTotals, resolveChartTotals } from './param-schemas';
import { type CompleteTotal, completeTotal } from './params/crosstab-parts';
import type { ParameterSettings } from './params/report-parameter-params';
import type { AlertCondition } from './alert-types';

export type { CompleteTotal } from './params/crosstab-parts';

/*
 * Every default of the API applied in one place, after validation. The schemas state each default to
 * OpenRPC readers (`.meta({ default })`); these functions apply exactly those values (a test walks the
 * document and checks), and what they return is complete: services take it as it is and re-check
 * nothing the contract already decided. The gateway keeps the params as sent beside it, because a saved
 * report records what the caller asked for, not the defaults of the day.
 */

type Sent<T extends z.ZodType> = z.output<T>;

export type SortDirection = (typeof L.SORT_DIRECTIONS)[number];
export type OrderBy = 'label' | 'value';

export interface CompleteSaveReport {
  name: string;
  description: string;
  folder: string;
  shared: boolean;
}

export interface CompleteQueriesExecute {
  index: string;
  /** Never blank: an empty or absent query is `*`. */
  query: string;
  page: number;
  pageSize: number;
  /** Directions trimmed and lower-cased; blank is `asc`. */
  sort: Array<{ field: string; direction: SortDirection }>;
  highlight?: { fields?: string[]; fragmentSize: number };
  facets?: Array<{ field: string; limit: number }>;
  cache: boolean;
  saveReport?: CompleteSaveReport;
}

export interface CompleteIndexesFind {
  searchText?: string;
  cursor?: string;
  limit: number;
}

export interface CompleteAxisOrder {
  by: OrderBy;
  /** Index into totals. */
  measure: number;
  direction: SortDirection;
}

export interface CompleteAxis {
  field: string;
  reverse: boolean;
  dateGroup?: L.DateGroup;
  bin?: { width: number; origin: number };
  /** A manual order of its keys (as JSON gives them): listed first, in this order. */
  order?: Array<string | number | boolean | null>;
}

export interface CompleteFilter {
  /** Index into totals. */
  measure: number;
  op: L.FilterOp;
  value: number;
}

/** A crosstab is drawn as a table or as a chart, never both; each carries its own defaults. */
export type CrosstabOutput =
  | { kind: 'table'; format: L.CrosstabFormat }
  | {
      kind: 'chart';
      chartType: string;
      /** Indexes into totals, in the order drawn: chartTotals resolved, or every total. */
      chartTotals: number[];
      /** An image, or the chart printed as PDF (format pdf with chartType). */
      imageFormat: ImageFormat | 'pdf';
      width: number;
      height: number;
    };

export interface CompleteCrosstabExecute {
  index: string;
  /** Never blank: an empty or absent query is `*`. */
  query: string;
  /** Row axes as objects, however they were sent (a field name is `{field, reverse: false}`). */
  rows: CompleteAxis[];
  columns: CompleteAxis[];
  totals: CompleteTotal[];
  /** IANA name; dateGroup keys are computed in it. */
  timeZone: string;
  rowFilter?: CompleteFilter;
  columnFilter?: CompleteFilter;
  subtotals: boolean;
  /** How a table lays its totals out (a chart and JSON ignore it). */
  totalsOn: L.TotalsOn;
  rowOrder: CompleteAxisOrder;
  columnOrder: CompleteAxisOrder;
  /** Absent: every value of the outermost level. */
  rowLimit?: number;
  columnLimit?: number;
  /** An "Other (N)" row (column) over the outer values not shown; only with rowLimit (columnLimit). */
  otherRow: boolean;
  otherColumn: boolean;
  output: CrosstabOutput;
  cache: boolean;
  /** Recompute every returned cell along an independent path and compare (meta.verify). */
  verify: boolean;
  saveReport?: CompleteSaveReport;
}

/** What the crosstab service pivots: the completed request without how the answer is drawn, checked or kept. */
export type CompletePivot = Omit<CompleteCrosstabExecute, 'output' | 'cache' | 'verify' | 'saveReport'>;

export interface CompleteReportsFind {
  search?: string;
  /** Absent: every type. */
  types?: Array<(typeof L.REPORT_TYPES)[number]>;
  cursor?: string;
  limit: number;
}

const DEFAULT_QUERY = '*';
export const DEFAULT_AXIS_ORDER: CompleteAxisOrder = { by: 'label', measure: 0, direction: 'asc' };

/** The query as it runs: blank means every record, which `*` says. */
export function completeQuery(query: string | undefined): string {
  return query === undefined || query.trim() === '' ? DEFAULT_QUERY : query;
}

/** Sort directions arrive in any case with blanks around (the schema's pattern allows it); blank is asc. */
export function completeDirection(direction: string | undefined): SortDirection {
  const d = (direction ?? '').trim().toLowerCase();
  return d === 'desc' ? 'desc' : 'asc';
}

function completeSave(s: Sent<typeof saveReportParam> | undefined): CompleteSaveReport | undefined {
  return s && { name: s.name, description: s.description ?? '', folder: s.folder ?? '', shared: s.shared ?? false };
}

function completeOrder(o: { by: OrderBy; measure?: number; direction?: SortDirection } | undefined): CompleteAxisOrder {
  return o
    ? { by: o.by, measure: o.measure ?? DEFAULT_AXIS_ORDER.measure, direction: o.direction ?? 'asc' }
    : DEFAULT_AXIS_ORDER;
}

function completeAxis(a: {
  field: string;
  reverse?: boolean;
  dateGroup?: L.DateGroup;
  bin?: { width: number; origin?: number };
  order?: Array<string | number | boolean | null>;
}): CompleteAxis {
  return {
    field: a.field,
    reverse: a.reverse ?? false,
    ...(a.dateGroup ? { dateGroup: a.dateGroup } : {}),
    ...(a.bin ? { bin: { width: a.bin.width, origin: a.bin.origin ?? 0 } } : {}),
    ...(a.order?.length ? { order: a.order } : {}),
  };
}

export function completeQueriesExecute(p: Sent<typeof queriesExecuteParams>): CompleteQueriesExecute {
  return {
    index: p.index,
    query: completeQuery(p.query),
    page: p.page ?? L.DEFAULT_PAGE,
    pageSize: p.pageSize ?? L.DEFAULT_PAGE_SIZE,
    sort: (p.sort ?? []).map((s) => ({ field: s.field, direction: completeDirection(s.direction) })),
    ...(p.highlight
      ? {
          highlight: {
            ...(p.highlight.fields ? { fields: p.highlight.fields } : {}),
            fragmentSize: p.highlight.fragmentSize ?? L.DEFAULT_FRAGMENT_SIZE,
          },
        }
      : {}),
    ...(p.facets ? { facets: p.facets.map((f) => ({ field: f.field, limit: f.limit ?? L.DEFAULT_FACET_LIMIT })) } : {}),
    cache: p.cache ?? true,
    ...(p.saveReport ? { saveReport: completeSave(p.saveReport) } : {}),
  };
}

export function completeIndexesFind(p: Sent<typeof indexesFindParams>): CompleteIndexesFind {
  return { searchText: p.searchText, cursor: p.cursor, limit: p.limit ?? L.DEFAULT_INDEX_LIMIT };
}

export function completeCrosstabExecute(p: Sent<typeof crosstabExecuteParams>): CompleteCrosstabExecute {
  const output: CrosstabOutput =
    p.chartType !== undefined
      ? {
          kind: 'chart',
          chartType: p.chartType,
          // Every name and index was checked to name a total by the schema.
          chartTotals: p.chartTotals
            ? resolveChartTotals(p.chartTotals, headerNamedTotals(p.totals, [...p.rows, ...(p.columns ?? [])]))
            : p.totals.map((_, i) => i),
          // Checked against IMAGE_FORMATS (exact spelling) by the schema.
          imageFormat: p.format === 'pdf' ? 'pdf' : ((p.imageFormat ?? 'png') as ImageFormat),
          width: p.width ?? L.DEFAULT_CHART_WIDTH,
          height: p.height ?? L.DEFAULT_CHART_HEIGHT,
        }
      : { kind: 'table', format: p.format ?? 'html' };
  return {
    index: p.index,
    query: completeQuery(p.query),
    rows: p.rows.map((r) => completeAxis(typeof r === 'string' ? { field: r } : r)),
    columns: (p.columns ?? []).map(completeAxis),
    timeZone: p.timeZone ?? L.DEFAULT_TIME_ZONE,
    ...(p.rowFilter ? { rowFilter: p.rowFilter } : {}),
    ...(p.columnFilter ? { columnFilter: p.columnFilter } : {}),
    totals: p.totals.map(completeTotal),
    subtotals: p.subtotals ?? false,
    totalsOn: p.totalsOn ?? 'columns',
    rowOrder: completeOrder(p.rowOrder),
    columnOrder: completeOrder(p.columnOrder),
    ...(p.rowLimit !== undefined ? { rowLimit: p.rowLimit } : {}),
    ...(p.columnLimit !== undefined ? { columnLimit: p.columnLimit } : {}),
    otherRow: p.otherRow ?? false,
    otherColumn: p.otherColumn ?? false,
    output,
    cache: p.cache ?? true,
    verify: p.verify ?? false,
    ...(p.saveReport ? { saveReport: completeSave(p.saveReport) } : {}),
  };
}

export function completeReportsFind(p: Sent<typeof reportsFindParams>): CompleteReportsFind {
  return {
    search: p.search,
    types: p.types as CompleteReportsFind['types'],
    cursor: p.cursor,
    limit: p.limit ?? L.DEFAULT_REPORT_LIMIT,
  };
}

export type ScheduleDelivery = { webhook: { url: string } } | { email: { to: string[] } };

export interface CompleteReportsSchedule {
  guid: string;
  cron: string;
  timeZone: string;
  format: L.ScheduleFormat;
  deliver: ScheduleDelivery;
  runNow: boolean;
  when?: AlertCondition;
}

/** Blanks around the cron, zone and URL dropped; addresses kept as sent (the mail server reads them). */
export function completeReportsSchedule(p: Sent<typeof reportsScheduleParams>): CompleteReportsSchedule {
  const { webhook, email } = p.deliver;
  return {
    guid: p.guid.trim(),
    cron: p.cron.trim().replace(/\s+/g, ' '),
    timeZone: p.timeZone?.trim() || L.DEFAULT_TIME_ZONE,
    format: p.format,
    deliver: webhook ? { webhook: { url: webhook.url.trim() } } : { email: { to: email?.to ?? [] } },
    runNow: p.runNow ?? false,
    ...(p.when !== undefined
      ? {
          when: {
            total: typeof p.when.total === 'string' ? p.when.total.trim() : p.when.total,
            op: p.when.op,
            value: p.when.value,
            on: p.when.on,
            onlyOnChange: p.when.onlyOnChange ?? false,
          },
        }
      : {}),
  };
}

export interface CompleteReportsExecute {
  guid: string;
  /** Absent: the latest version. */
  version?: number;
  /** Overrides of the saved params; absent ones keep what was saved. */
  page?: number;
  pageSize?: number;
  format?: L.CrosstabFormat;
  imageFormat?: 'png' | 'svg';
  asOf: (typeof L.AS_OF)[number];
  /** Values of the report's declared parameters, by name. */
  parameters?: ParameterSettings;
}

export interface CompleteQueriesReplay {
  token: string;
  cache: boolean;
}

export function completeQueriesReplay(p: Sent<typeof queriesReplayParams>): CompleteQueriesReplay {
  return { token: p.token, cache: p.cache ?? true };
}

export function completeReportsExecute(p: Sent<typeof reportsExecuteParams>): CompleteReportsExecute {
  return {
    guid: p.guid,
    ...(p.version !== undefined ? { version: p.version } : {}),
    ...(p.page !== undefined ? { page: p.page } : {}),
    ...(p.pageSize !== undefined ? { pageSize: p.pageSize } : {}),
    ...(p.format !== undefined ? { format: p.format } : {}),
    ...(p.imageFormat !== undefined ? { imageFormat: p.imageFormat === 'svg' ? 'svg' : 'png' } : {}),
    asOf: p.asOf ?? L.DEFAULT_AS_OF,
    ...(p.parameters !== undefined ? { parameters: p.parameters } : {}),
  };
}

import type { RawJson } from './raw-json';
import type {
  Caller,
  CrosstabFormat,
  IndexesFindResult,
  MethodName,
  QueriesExecuteResult,
  ReportsFindResult,
  ReportsMetadataResult,
  ShowAs,
} from '@quarry/contract';

/** Per-call context every service call carries. */
export interface CallScope {
  requestId: string;
}

export type { Caller } from '@quarry/contract';
export { RawJson } from './raw-json';

export type CacheStatus = 'hit' | 'miss' | 'bypass';

export interface SearchRequest {
  index: string;
  query: string;
  /** Absent: the service's default (the contract's). */
  page?: number;
  pageSize?: number;
  sort: ReadonlyArray<{ field: string; direction?: string }>;
  bypassCache: boolean;
}

/** The contract's result; its records stay the query service's JSON text (RawJson). */
export type SearchPage = Omit<QueriesExecuteResult, 'report' | 'records'> & { records: RawJson };

export interface IndexSearch {
  searchText?: string;
  cursor?: string;
  limit?: number;
}

export interface AxisOrderRequest {
  by: 'label' | 'value';
  measure: number;
  direction: 'asc' | 'desc';
}

export interface PivotRequest {
  index: string;
  query: string;
  rows: readonly string[];
  columns: ReadonlyArray<{ field: string; reverse: boolean }>;
  totals: ReadonlyArray<{
    aggregationType: string;
    field?: string;
    dynamicView?: string;
    name?: string;
    showAs?: ShowAs;
  }>;
  subtotals: boolean;
  rowOrder?: AxisOrderRequest;
  columnOrder?: AxisOrderRequest;
  rowLimit?: number;
  columnLimit?: number;
  /** A table format, or `grid`: the data a chart is drawn from. */
  output: CrosstabFormat | 'grid';
  bypassCache: boolean;
}

export interface PivotAnswer {
  /** The table in the asked format (HTML, CSV, or JSON text); empty for `grid`. */
  body: string;
  /** The chart's input, passed to renderChart as is; empty unless `grid` was asked. */
  grid: string;
  rowCount: number;
  columnCount: number;
  rowsOmitted: number;
  columnsOmitted: number;
}

export interface ChartRequest {
  grid: string;
  chartType: string;
  width: number;
  height: number;
  title: string;
  imageFormat: 'png' | 'svg';
}

export interface ChartImage {
  contentType: 'image/png' | 'image/svg+xml';
  /** PNG as base64, or the SVG text. */
  data: string;
  width: number;
  height: number;
  chartType: string;
}

export interface ReportToSave {
  name: string;
  description: string;
  folder: string;
  shared: boolean;
  type: 'query' | 'crosstab';
  index: string;
  method: MethodName;
  /** The executable params, defaults filled in. */
  params: Record<string, unknown>;
}

/**
 * The services the gateway orchestrates, in the gateway's own terms (the contract's shapes): only the
 * adapter knows the wire. Adapters must reject with AppError only: the service's own code when it
 * answered with one, UNAVAILABLE naming the service when it could not be reached or refused the
 * gateway's credential, TIMEOUT when it did not answer within the deadline.
 */
export interface ServiceClients {
  search(caller: Caller, req: SearchRequest, scope: CallScope): Promise<{ page: SearchPage; cache?: CacheStatus }>;
  findIndexes(caller: Caller, req: IndexSearch, scope: CallScope): Promise<IndexesFindResult>;
  pivot(caller: Caller, req: PivotRequest, scope: CallScope): Promise<{ table: PivotAnswer; cache?: CacheStatus }>;
  renderChart(req: ChartRequest, scope: CallScope): Promise<ChartImage>;
  saveReport(caller: Caller, report: ReportToSave, scope: CallScope): Promise<{ guid: string }>;
  findReports(
    caller: Caller,
    req: { search?: string; types?: readonly string[]; cursor?: string; limit?: number },
    scope: CallScope,
  ): Promise<ReportsFindResult>;
  reportMetadata(caller: Caller, guid: string, scope: CallScope): Promise<ReportsMetadataResult>;
  close(): void;
}

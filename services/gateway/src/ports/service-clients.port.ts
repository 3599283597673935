import type { RawJson } from './raw-json';
import type {
  CacheStatus,
  Caller,
  CompleteAxisOrder,
  CompleteIndexesFind,
  CompletePivot,
  CompleteReportsFind,
  CompleteSearch,
  CrosstabFormat,
  ImageFormat,
  IndexesFindResult,
  MethodName,
  QueriesExecuteResult,
  ReportsFindResult,
  ReportsDeleteResult,
  ReportsMetadataResult,
  ReportsUpdateResult,
  VerifyOutcome,
} from '@quarry/contract';

/**
 * The client request a service call is made for: its request id goes to the service with the call, so
 * the logs of the gateway and of every service it calls name the same request.
 */
export interface RequestTrace {
  requestId: string;
  /** Aborts when the caller has gone away: the service's work for it is cancelled (unless others share it). */
  signal?: AbortSignal;
}

export type { Caller } from '@quarry/contract';
export { RawJson } from './raw-json';

/** A search as the contract completed it: the service applies no default of its own. */
export interface SearchRequest extends CompleteSearch {
  bypassCache: boolean;
  /** A kept earlier version of the index (a saved report's snapshot) instead of the current one. */
  asOfVersion?: number;
  /** The time relative dates in the query are read at (Unix ms); absent: the service's now. */
  nowMs?: number;
}

/** What the service said of the data an answer came from (meta.provenance). */
export interface AnsweredFrom {
  indexVersion: number;
  /** The SHA-256 of the version's records file; '' for a version loaded before it was kept. */
  snapshot: string;
  engine: string;
}

/** The contract's result; its records stay the query service's JSON text (RawJson). */
export type SearchPage = Omit<QueriesExecuteResult, 'report' | 'records'> & { records: RawJson };

export type AxisOrderRequest = CompleteAxisOrder;

/** A crosstab as the contract completed it, and which output the service renders. */
export interface PivotRequest extends CompletePivot {
  /** A table format, or `grid`: the data a chart is drawn from. */
  output: CrosstabFormat | 'grid';
  bypassCache: boolean;
  /** A kept earlier version of the index (a saved report's snapshot) instead of the current one. */
  asOfVersion?: number;
  /** The time relative dates in the query are read at (Unix ms); absent: the service's now. */
  nowMs?: number;
  /** Recompute every cell along an independent path and compare. */
  verify?: boolean;
}

export interface PivotAnswer {
  /** The media type the crosstab service named: the table's format, or JSON for `grid`. */
  contentType: string;
  /**
   * The table as text (HTML, CSV, the JSON table), the workbook as base64, or for `grid` the chart's input
   * as JSON text, passed to renderChart as is.
   */
  body: string;
  rowCount: number;
  columnCount: number;
  rowsOmitted: number;
  columnsOmitted: number;
  /** Outermost row (column) groups rowFilter (columnFilter) left out. */
  rowsFilteredOut: number;
  columnsFilteredOut: number;
}

export interface ChartRequest {
  grid: string;
  chartType: string;
  width: number;
  height: number;
  title: string;
  /** An image, or "pdf": the chart printed on one page of width × height. */
  imageFormat: ImageFormat | 'pdf';
}

export type ChartImage =
  ChartOutput<'image/png' | 'image/svg+xml' | 'application/pdf', string> | ChartOutput<'application/json', RawJson>;

/** A crosstab's HTML table to print on A4, with what heads each page. */
export interface TablePrintRequest {
  html: string;
  /** The index's name. */
  title: string;
  /** The query. */
  subtitle: string;
}

interface ChartOutput<C extends string, D> {
  /** PNG or PDF as base64, the SVG text, or the ECharts option (imageFormat echarts). */
  contentType: C;
  data: D;
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
  /** The index version the execution ran on. */
  indexVersion: number;
}

/**
 * The services the gateway orchestrates, in the gateway's own terms (the contract's shapes): only the
 * adapter knows the wire. Adapters must reject with AppError only: the service's own code when it
 * answered with one, UNAVAILABLE naming the service when it could not be reached or refused the
 * gateway's credential, TIMEOUT when it did not answer within the deadline.
 */
export interface ServiceClients {
  search(
    caller: Caller,
    req: SearchRequest,
    trace: RequestTrace,
  ): Promise<AnsweredFrom & { page: SearchPage; cache?: CacheStatus }>;
  findIndexes(caller: Caller, req: CompleteIndexesFind, trace: RequestTrace): Promise<IndexesFindResult>;
  pivot(
    caller: Caller,
    req: PivotRequest,
    trace: RequestTrace,
  ): Promise<AnsweredFrom & { table: PivotAnswer; cache?: CacheStatus; servedBy?: string; verify?: VerifyOutcome }>;
  renderChart(caller: Caller, req: ChartRequest, trace: RequestTrace): Promise<ChartImage>;
  /** The table printed by the chart workers' Chromium: the PDF, base64-encoded. */
  printTable(caller: Caller, req: TablePrintRequest, trace: RequestTrace): Promise<string>;
  saveReport(caller: Caller, report: ReportToSave, trace: RequestTrace): Promise<{ guid: string }>;
  findReports(caller: Caller, req: CompleteReportsFind, trace: RequestTrace): Promise<ReportsFindResult>;
  /** A report version the caller may see (the latest when no version is given). */
  reportMetadata(
    caller: Caller,
    req: { guid: string; version?: number },
    trace: RequestTrace,
  ): Promise<ReportsMetadataResult>;
  /** Owner or admin only; another user's report rejects exactly as an unknown guid (NOT_FOUND). */
  updateReport(caller: Caller, change: ReportUpdate, trace: RequestTrace): Promise<ReportsUpdateResult>;
  deleteReport(caller: Caller, guid: string, trace: RequestTrace): Promise<ReportsDeleteResult>;
  close(): void;
}

export interface ReportUpdate {
  guid: string;
  name?: string;
  description?: string;
  folder?: string;
  shared?: boolean;
  /** New executable params (already run), and the index version they ran on: the next version. */
  params?: { json: string; index: string; indexVersion: number };
}

import type { pb } from '@quarry/rpc';

/** Per-call context every service call carries. */
export interface CallScope {
  requestId: string;
}

/**
 * The services the gateway orchestrates. Adapters must reject with AppError only: the service's own
 * code when it answered with one, UNAVAILABLE naming the service when it could not be reached, TIMEOUT
 * when it did not answer within the deadline.
 */
export interface ServiceClients {
  executeQuery(req: pb.ExecuteQueryRequest, scope: CallScope): Promise<pb.ExecuteQueryResponse__Output>;
  findIndexes(req: pb.FindIndexesRequest, scope: CallScope): Promise<pb.FindIndexesResponse__Output>;
  executeCrosstab(req: pb.CrosstabRequest, scope: CallScope): Promise<pb.CrosstabResponse__Output>;
  renderChart(req: pb.RenderChartRequest, scope: CallScope): Promise<pb.RenderChartResponse__Output>;
  saveReport(req: pb.SaveReportRequest, scope: CallScope): Promise<pb.ReportRef__Output>;
  findReports(req: pb.FindReportsRequest, scope: CallScope): Promise<pb.FindReportsResponse__Output>;
  getReportMetadata(req: pb.GetReportMetadataRequest, scope: CallScope): Promise<pb.ReportMetadata__Output>;
  close(): void;
}

import type { ServiceName } from '@quarry/config';
import { CLIENT_OPTIONS, callUnary, grpc, loadQuarryProto, type pb } from '@quarry/rpc';
import type { CallScope, ServiceClients } from '../ports/service-clients.port';

/** One long-lived channel per service; grpc-js reconnects by itself when a service restarts. */
export class GrpcServiceClients implements ServiceClients {
  private readonly query: pb.QueryServiceClient;
  private readonly crosstab: pb.CrosstabServiceClient;
  private readonly chart: pb.ChartServiceClient;
  private readonly reports: pb.ReportsServiceClient;

  constructor(
    addrs: Record<ServiceName, string>,
    private readonly deadlineMs: number,
  ) {
    const v1 = loadQuarryProto().quarry.v1;
    const creds = grpc.credentials.createInsecure();
    this.query = new v1.QueryService(addrs.query, creds, CLIENT_OPTIONS);
    this.crosstab = new v1.CrosstabService(addrs.crosstab, creds, CLIENT_OPTIONS);
    this.chart = new v1.ChartService(addrs.chart, creds, CLIENT_OPTIONS);
    this.reports = new v1.ReportsService(addrs.reports, creds, CLIENT_OPTIONS);
  }

  private opts(scope: CallScope) {
    return { requestId: scope.requestId, deadlineMs: this.deadlineMs };
  }

  executeQuery(req: pb.ExecuteQueryRequest, scope: CallScope) {
    return callUnary<pb.ExecuteQueryResponse__Output>('query', (md, o, cb) => this.query.ExecuteQuery(req, md, o, cb), this.opts(scope));
  }
  findIndexes(req: pb.FindIndexesRequest, scope: CallScope) {
    return callUnary<pb.FindIndexesResponse__Output>('query', (md, o, cb) => this.query.FindIndexes(req, md, o, cb), this.opts(scope));
  }
  executeCrosstab(req: pb.CrosstabRequest, scope: CallScope) {
    return callUnary<pb.CrosstabResponse__Output>('crosstab', (md, o, cb) => this.crosstab.ExecuteCrosstab(req, md, o, cb), this.opts(scope));
  }
  renderChart(req: pb.RenderChartRequest, scope: CallScope) {
    return callUnary<pb.RenderChartResponse__Output>('chart', (md, o, cb) => this.chart.RenderChart(req, md, o, cb), this.opts(scope));
  }
  saveReport(req: pb.SaveReportRequest, scope: CallScope) {
    return callUnary<pb.ReportRef__Output>('reports', (md, o, cb) => this.reports.SaveReport(req, md, o, cb), this.opts(scope));
  }
  findReports(req: pb.FindReportsRequest, scope: CallScope) {
    return callUnary<pb.FindReportsResponse__Output>('reports', (md, o, cb) => this.reports.FindReports(req, md, o, cb), this.opts(scope));
  }
  getReportMetadata(req: pb.GetReportMetadataRequest, scope: CallScope) {
    return callUnary<pb.ReportMetadata__Output>('reports', (md, o, cb) => this.reports.GetReportMetadata(req, md, o, cb), this.opts(scope));
  }

  close(): void {
    for (const c of [this.query, this.crosstab, this.chart, this.reports]) c.close();
  }
}

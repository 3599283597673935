import type { ServiceName } from '@quarry/config';
import { CLIENT_OPTIONS, callUnary, grpc, loadQuarryProto, type pb, type UnaryMethod } from '@quarry/rpc';
import type { CallScope, ServiceClients } from '../ports/service-clients.port';

type Defs = ReturnType<typeof loadQuarryProto>['quarry']['v1'];

/** One long-lived channel per service; grpc-js reconnects by itself when a service restarts. */
export class GrpcServiceClients implements ServiceClients {
  private readonly clients: Record<ServiceName, grpc.Client>;
  private readonly v1: Defs;

  constructor(
    addrs: Record<ServiceName, string>,
    private readonly deadlineMs: number,
  ) {
    this.v1 = loadQuarryProto().quarry.v1;
    const creds = grpc.credentials.createInsecure();
    this.clients = {
      query: new grpc.Client(addrs.query, creds, CLIENT_OPTIONS),
      crosstab: new grpc.Client(addrs.crosstab, creds, CLIENT_OPTIONS),
      chart: new grpc.Client(addrs.chart, creds, CLIENT_OPTIONS),
      reports: new grpc.Client(addrs.reports, creds, CLIENT_OPTIONS),
    };
  }

  private call<Req, Res>(service: ServiceName, method: UnaryMethod<Req, Res>, req: Req, scope: CallScope): Promise<Res> {
    return callUnary(service, this.clients[service].getChannel(), method, req, { requestId: scope.requestId, deadlineMs: this.deadlineMs });
  }

  executeQuery(req: pb.ExecuteQueryRequest, scope: CallScope) {
    return this.call('query', this.v1.QueryService.service.ExecuteQuery, req, scope);
  }
  findIndexes(req: pb.FindIndexesRequest, scope: CallScope) {
    return this.call('query', this.v1.QueryService.service.FindIndexes, req, scope);
  }
  executeCrosstab(req: pb.CrosstabRequest, scope: CallScope) {
    return this.call('crosstab', this.v1.CrosstabService.service.ExecuteCrosstab, req, scope);
  }
  renderChart(req: pb.RenderChartRequest, scope: CallScope) {
    return this.call('chart', this.v1.ChartService.service.RenderChart, req, scope);
  }
  saveReport(req: pb.SaveReportRequest, scope: CallScope) {
    return this.call('reports', this.v1.ReportsService.service.SaveReport, req, scope);
  }
  findReports(req: pb.FindReportsRequest, scope: CallScope) {
    return this.call('reports', this.v1.ReportsService.service.FindReports, req, scope);
  }
  getReportMetadata(req: pb.GetReportMetadataRequest, scope: CallScope) {
    return this.call('reports', this.v1.ReportsService.service.GetReportMetadata, req, scope);
  }

  close(): void {
    for (const c of Object.values(this.clients)) c.close();
  }
}

import type { ServiceName } from '@quarry/config';
import { AppError, isAppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import { CLIENT_OPTIONS, callUnary, channelCredentials, dialTarget, grpc, loadQuarryProto, type GrpcTrust, type pb, type UnaryMethod } from '@quarry/rpc';
import type { CallScope, ServiceClients } from '../ports/service-clients.port';

type Defs = ReturnType<typeof loadQuarryProto>['quarry']['v1'];

/**
 * One long-lived channel per service; grpc-js reconnects by itself when a service restarts. Each
 * resolves its address through DNS and spreads calls over every pod the name returns (round_robin,
 * CLIENT_OPTIONS), which a headless Service makes all of the service's ready pods.
 */
export class GrpcServiceClients implements ServiceClients {
  private readonly clients: Record<ServiceName, grpc.Client>;
  private readonly v1: Defs;

  private readonly internalToken: string;

  constructor(
    addrs: Record<ServiceName, string>,
    private readonly deadlineMs: number,
    trust: GrpcTrust,
    private readonly log: Logger,
  ) {
    this.v1 = loadQuarryProto().quarry.v1;
    this.internalToken = trust.internalToken;
    const creds = channelCredentials(trust.tls);
    this.clients = {
      query: new grpc.Client(dialTarget(addrs.query), creds, CLIENT_OPTIONS),
      crosstab: new grpc.Client(dialTarget(addrs.crosstab), creds, CLIENT_OPTIONS),
      chart: new grpc.Client(dialTarget(addrs.chart), creds, CLIENT_OPTIONS),
      reports: new grpc.Client(dialTarget(addrs.reports), creds, CLIENT_OPTIONS),
    };
  }

  private call<Req, Res>(service: ServiceName, method: UnaryMethod<Req, Res>, req: Req, scope: CallScope): Promise<Res> {
    const options = { requestId: scope.requestId, deadlineMs: this.deadlineMs, internalToken: this.internalToken };
    return callUnary(service, this.clients[service].getChannel(), method, req, options).catch((err: unknown) => {
      throw this.credentialRefusal(err, service, scope) ?? err;
    });
  }

  /**
   * Services authenticate no end user (the gateway does), so UNAUTHENTICATED from one can only mean it
   * refused the gateway's own credential: a deployment fault, not the client's. Passed on as is it would
   * read as a 401 about the client's token; it becomes a 503 and an error in the log for the operator.
   */
  private credentialRefusal(err: unknown, service: ServiceName, scope: CallScope): AppError | undefined {
    if (!isAppError(err) || err.code !== 'UNAUTHENTICATED') return undefined;
    this.log.error({ requestId: scope.requestId, service, detail: err.detail }, `the ${service} service refused the gateway's internal credential`);
    return AppError.unavailable(`The ${service} service refused the gateway's internal credential (QUARRY_INTERNAL_TOKEN differs between processes)`, err);
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

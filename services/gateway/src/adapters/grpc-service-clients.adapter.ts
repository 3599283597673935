import type { ServiceName } from '@quarry/config';
import { AppError, isAppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import {
  CLIENT_OPTIONS,
  callClientStream,
  callUnary,
  callerToWire,
  channelCredentials,
  dialTarget,
  grpc,
  loadQuarryProto,
  type GrpcTrust,
  type pb,
  type UnaryMethod,
} from '@quarry/rpc';
import {
  indexesFindParamsCodec,
  pivotParamsCodec,
  reportsFindParamsCodec,
  searchParamsCodec,
  type CompleteIndexesFind,
  type CompleteReportsFind,
} from '@quarry/contract';
import type {
  CacheStatus,
  CheckedParamsOf,
  ResultOf,
  IndexesFindResult,
  ReportsDeleteResult,
  ReportsFindResult,
  ReportsMetadataResult,
  ReportsUpdateResult,
} from '@quarry/contract';
import type { SourceCalls, SourceMethod } from '../ports/sources.port';
import type {
  Caller,
  ChartImage,
  ChartRequest,
  TablePrintRequest,
  PivotAnswer,
  PivotRequest,
  ReportToSave,
  ReportUpdate,
  RequestTrace,
  SearchPage,
  SearchRequest,
  ServiceClients,
} from '../ports/service-clients.port';
import { RawJson } from '../ports/raw-json';
import type { RecordUploads, UploadAnswer, UploadInput } from '../ports/record-uploads.port';
import { isErrorCode } from '@quarry/errors';
import { splitSavedParams } from '../domain/report-parameters';

type Defs = ReturnType<typeof loadQuarryProto>['quarry']['v1'];

/** The service's word for it; anything else (an older service) says nothing rather than something wrong. */
function cacheStatus(value: string): CacheStatus | undefined {
  return value === 'hit' || value === 'miss' || value === 'bypass' ? value : undefined;
}

function toReportSummary(r: pb.ReportSummary__Output | null): ReportsFindResult['reports'][number] {
  if (!r) throw AppError.internal('the reports service answered without the report');
  return {
    guid: r.guid,
    name: r.name,
    description: r.description,
    type: r.type as 'query' | 'crosstab',
    index: r.index,
    owner: r.owner,
    folder: r.folder,
    shared: r.shared,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function toMetadata(res: pb.ReportMetadata__Output): ReportsMetadataResult {
  // A version keeps its parameters beside the executable params; the method is called with the latter only.
  const { params, parameters } = splitSavedParams(JSON.parse(res.paramsJson) as Record<string, unknown>);
  return {
    ...toReportSummary(res.report),
    method: res.method as ReportsMetadataResult['method'],
    params,
    parameters,
    version: res.version,
    versions: res.versions.map((v) => ({ version: v.version, savedAt: v.savedAt, indexVersion: v.indexVersion })),
    indexVersion: res.indexVersion,
  };
}

/** Media types the JSON answer carries as text; any other (a workbook) goes as base64, encoded once, here. */
const TEXT_TYPE = /^(text\/|application\/json$|image\/svg\+xml$)/;

/** A service's content as the JSON answer carries it. */
function contentText(content: pb.Content__Output | null): { contentType: string; body: string } {
  if (!content) throw AppError.internal('the service answered without its content');
  const body = Buffer.from(content.body.buffer, content.body.byteOffset, content.body.byteLength);
  return {
    contentType: content.contentType,
    body: body.toString(TEXT_TYPE.test(content.contentType) ? 'utf8' : 'base64'),
  };
}

/**
 * The services over gRPC: the one place that knows the wire (the contract's completed params as one JSON
 * payload, content as bytes). One long-lived channel per service; grpc-js reconnects by itself when a
 * service restarts. Each resolves its address through DNS and spreads calls over every pod the name
 * returns (round_robin, CLIENT_OPTIONS), which a headless Service makes all of the service's ready pods.
 */

/**
 * How long an upload may take from its first byte to its answer: its body arrives at the client's pace and
 * its load can take minutes, so the calls' deadline (QUARRY_GRPC_DEADLINE_MS) does not apply; a client
 * that goes away cancels it.
 */
const UPLOAD_DEADLINE_MS = 6 * 3600_000;

/** The gRPC message size a body is cut into: well under the channel's limit, large enough to be cheap. */
const UPLOAD_PIECE_BYTES = 1 << 20;

async function* uploadMessages(
  header: pb.UploadHeader,
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<pb.UploadChunk> {
  yield { header };
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    for (let at = 0; at < chunk.length; at += UPLOAD_PIECE_BYTES)
      yield { data: Buffer.from(chunk.buffer, chunk.byteOffset + at, Math.min(UPLOAD_PIECE_BYTES, chunk.length - at)) };
  }
  // The body arrived whole: said so, so the service can tell it from one cut off.
  yield { end: { bytes } };
}

function uploadAnswer(o: pb.LoadOutcome__Output): UploadAnswer {
  return {
    index: o.index,
    ...(o.version ? { version: o.version } : {}),
    ...(o.rowsRead !== undefined && o.rowsRead !== null ? { rowsRead: o.rowsRead } : {}),
    loaded: o.loaded,
    rejected: o.rejected,
    rejects: o.rejects.map((r) => ({
      ...(r.line !== undefined && r.line !== null ? { line: r.line } : {}),
      ...(r.record !== undefined && r.record !== null ? { record: r.record } : {}),
      ...(r.column ? { column: r.column } : {}),
      reason: r.reason,
    })),
    durationMs: o.durationMs,
    replaced: o.replaced,
    ...(o.version ? { recordCount: o.recordCount } : {}),
    ...(o.failureCode
      ? { failure: { code: isErrorCode(o.failureCode) ? o.failureCode : 'INTERNAL', detail: o.failureDetail } }
      : {}),
  };
}

const SOURCE_RPCS = {
  'SOURCES.CREATE': 'CreateSource',
  'SOURCES.FIND': 'FindSources',
  'SOURCES.UPDATE': 'UpdateSource',
  'SOURCES.DELETE': 'DeleteSource',
  'SOURCES.RUN': 'RunSource',
  'SOURCES.RUNS': 'SourceRuns',
} as const satisfies Record<SourceMethod, string>;

export class GrpcServiceClients implements ServiceClients, RecordUploads, SourceCalls {
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
      ingest: new grpc.Client(dialTarget(addrs.ingest), creds, CLIENT_OPTIONS),
    };
  }

  private call<Req, Res>(
    service: ServiceName,
    method: UnaryMethod<Req, Res>,
    req: Req,
    trace: RequestTrace,
  ): Promise<Res> {
    const options = {
      requestId: trace.requestId,
      deadlineMs: this.deadlineMs,
      internalToken: this.internalToken,
      ...(trace.signal ? { signal: trace.signal } : {}),
    };
    return callUnary(service, this.clients[service].getChannel(), method, req, options).catch((err: unknown) => {
      throw this.credentialRefusal(err, service, trace) ?? err;
    });
  }

  /**
   * Services authenticate no end user (the gateway does), so UNAUTHENTICATED from one can only mean it
   * refused the gateway's own credential: a deployment fault, not the client's. Passed on as is it would
   * read as a 401 about the client's token; it becomes a 503 and an error in the log for the operator.
   */
  private credentialRefusal(err: unknown, service: ServiceName, trace: RequestTrace): AppError | undefined {
    if (!isAppError(err) || err.code !== 'UNAUTHENTICATED') return undefined;
    this.log.error(
      { requestId: trace.requestId, service, detail: err.detail },
      `the ${service} service refused the gateway's internal credential`,
    );
    return AppError.unavailable(
      `The ${service} service refused the gateway's internal credential (QUARRY_INTERNAL_TOKEN differs between processes)`,
      err,
    );
  }

  async search(caller: Caller, req: SearchRequest, trace: RequestTrace) {
    const { bypassCache, asOfVersion, nowMs, ...params } = req;
    const res = await this.call(
      'query',
      this.v1.QueryService.service.ExecuteQuery,
      {
        caller: callerToWire(caller),
        paramsJson: searchParamsCodec.encode(params),
        bypassCache,
        ...(nowMs !== undefined ? { nowMs } : {}),
        ...(asOfVersion !== undefined ? { asOfVersion } : {}),
      },
      trace,
    );
    const page: SearchPage = {
      index: res.index,
      query: res.query,
      page: res.page,
      pageSize: res.pageSize,
      total: res.total,
      totalPages: res.totalPages,
      fields: res.fields.map((f) => ({ name: f.name, type: f.type })),
      records: new RawJson(res.recordsJson),
      // Scores, highlights and facets as the query service wrote them (QueriesExecuteResult's own fields).
      ...(res.extrasJson ? (JSON.parse(res.extrasJson) as Pick<SearchPage, 'scores' | 'highlights' | 'facets'>) : {}),
    };
    return {
      page,
      cache: cacheStatus(res.cache),
      indexVersion: res.indexVersion,
      snapshot: res.snapshotSha256,
      engine: res.engine,
    };
  }

  async upload(
    caller: Caller,
    input: UploadInput,
    body: AsyncIterable<Uint8Array>,
    trace: RequestTrace,
    signal: AbortSignal,
  ): Promise<UploadAnswer> {
    const header: pb.UploadHeader = {
      caller: callerToWire(caller),
      index: input.index,
      mode: input.mode,
      key: input.key ?? '',
      onError: input.onError,
      ...(input.maxErrors !== undefined ? { maxErrors: input.maxErrors } : {}),
      format: input.format,
      gzip: input.gzip,
    };
    const options = {
      requestId: trace.requestId,
      deadlineMs: UPLOAD_DEADLINE_MS,
      internalToken: this.internalToken,
      signal,
    };
    const res = await callClientStream(
      'ingest',
      this.clients.ingest,
      this.v1.IngestService.service.UploadRecords,
      uploadMessages(header, body),
      options,
    ).catch((err: unknown) => {
      throw this.credentialRefusal(err, 'ingest', trace) ?? err;
    });
    return uploadAnswer(res);
  }

  async callSources<M extends SourceMethod>(
    method: M,
    caller: Caller,
    tokenHash: string,
    params: CheckedParamsOf<M>,
    trace: RequestTrace,
  ): Promise<ResultOf<M>> {
    const res = await this.call(
      'ingest',
      this.v1.IngestService.service[SOURCE_RPCS[method]],
      { caller: callerToWire(caller), paramsJson: JSON.stringify(params), tokenHash },
      trace,
    );
    return JSON.parse(res.resultJson) as ResultOf<M>;
  }

  async findIndexes(caller: Caller, req: CompleteIndexesFind, trace: RequestTrace): Promise<IndexesFindResult> {
    const res = await this.call(
      'query',
      this.v1.QueryService.service.FindIndexes,
      { caller: callerToWire(caller), paramsJson: indexesFindParamsCodec.encode(req) },
      trace,
    );
    return {
      indexes: res.indexes.map((i) => ({
        name: i.name,
        description: i.description,
        recordCount: i.recordCount,
        fields: i.fields.map((f) => ({ name: f.name, type: f.type })),
        dynamicViews: i.dynamicViews,
        updatedAt: i.updatedAt,
      })),
      nextCursor: res.nextCursor === '' ? null : res.nextCursor,
    };
  }

  async pivot(caller: Caller, req: PivotRequest, trace: RequestTrace) {
    const { output, bypassCache, asOfVersion, nowMs, verify, ...params } = req;
    const res = await this.call(
      'crosstab',
      this.v1.CrosstabService.service.ExecuteCrosstab,
      {
        caller: callerToWire(caller),
        paramsJson: pivotParamsCodec.encode(params),
        output,
        bypassCache,
        ...(nowMs !== undefined ? { nowMs } : {}),
        verify: verify === true,
        ...(asOfVersion !== undefined ? { asOfVersion } : {}),
      },
      trace,
    );
    const table: PivotAnswer = {
      ...contentText(res.content),
      rowCount: res.rowCount,
      columnCount: res.columnCount,
      rowsOmitted: res.rowsOmitted,
      columnsOmitted: res.columnsOmitted,
      rowsFilteredOut: res.rowsFilteredOut,
      columnsFilteredOut: res.columnsFilteredOut,
    };
    return {
      table,
      cache: cacheStatus(res.cache),
      indexVersion: res.indexVersion,
      snapshot: res.snapshotSha256,
      engine: res.engine,
      ...(res.servedBy ? { servedBy: res.servedBy } : {}),
      ...(res.verify ? { verify: { cells: res.verify.cells, mismatched: res.verify.mismatched } } : {}),
    };
  }

  async renderChart(caller: Caller, req: ChartRequest, trace: RequestTrace): Promise<ChartImage> {
    const res = await this.call(
      'chart',
      this.v1.ChartService.service.RenderChart,
      {
        gridJson: req.grid,
        chartType: req.chartType,
        width: req.width,
        height: req.height,
        title: req.title,
        imageFormat: req.imageFormat,
        caller: callerToWire(caller),
      },
      trace,
    );
    const drawn = { width: res.width, height: res.height, chartType: res.chartType };
    if (req.imageFormat === 'echarts')
      // The chart service's JSON goes out as it came: never parsed and written again here.
      return { contentType: 'application/json', data: new RawJson(res.optionJson), ...drawn };
    if (req.imageFormat === 'pdf') return { contentType: 'application/pdf', data: res.pdfBase64, ...drawn };
    return req.imageFormat === 'svg'
      ? { contentType: 'image/svg+xml', data: res.svg, ...drawn }
      : { contentType: 'image/png', data: res.pngBase64, ...drawn };
  }

  async printTable(caller: Caller, req: TablePrintRequest, trace: RequestTrace): Promise<string> {
    const res = await this.call(
      'chart',
      this.v1.ChartService.service.PrintTable,
      { html: req.html, title: req.title, subtitle: req.subtitle, caller: callerToWire(caller) },
      trace,
    );
    return res.pdfBase64;
  }

  async saveReport(caller: Caller, report: ReportToSave, trace: RequestTrace): Promise<{ guid: string }> {
    const res = await this.call(
      'reports',
      this.v1.ReportsService.service.SaveReport,
      {
        caller: callerToWire(caller),
        save: { name: report.name, description: report.description, folder: report.folder, shared: report.shared },
        type: report.type,
        index: report.index,
        method: report.method,
        paramsJson: JSON.stringify(report.params),
        indexVersion: report.indexVersion,
      },
      trace,
    );
    return { guid: res.guid };
  }

  async findReports(caller: Caller, req: CompleteReportsFind, trace: RequestTrace): Promise<ReportsFindResult> {
    const res = await this.call(
      'reports',
      this.v1.ReportsService.service.FindReports,
      { caller: callerToWire(caller), paramsJson: reportsFindParamsCodec.encode(req) },
      trace,
    );
    return { reports: res.reports.map(toReportSummary), nextCursor: res.nextCursor === '' ? null : res.nextCursor };
  }

  async reportMetadata(
    caller: Caller,
    req: { guid: string; version?: number },
    trace: RequestTrace,
  ): Promise<ReportsMetadataResult> {
    const res = await this.call(
      'reports',
      this.v1.ReportsService.service.GetReportMetadata,
      { caller: callerToWire(caller), guid: req.guid, ...(req.version !== undefined ? { version: req.version } : {}) },
      trace,
    );
    return toMetadata(res);
  }

  async updateReport(caller: Caller, change: ReportUpdate, trace: RequestTrace): Promise<ReportsUpdateResult> {
    const res = await this.call(
      'reports',
      this.v1.ReportsService.service.UpdateReport,
      {
        caller: callerToWire(caller),
        guid: change.guid,
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.description !== undefined ? { description: change.description } : {}),
        ...(change.folder !== undefined ? { folder: change.folder } : {}),
        ...(change.shared !== undefined ? { shared: change.shared } : {}),
        ...(change.params
          ? { paramsJson: change.params.json, index: change.params.index, indexVersion: change.params.indexVersion }
          : {}),
      },
      trace,
    );
    return toMetadata(res);
  }

  async deleteReport(caller: Caller, guid: string, trace: RequestTrace): Promise<ReportsDeleteResult> {
    const res = await this.call(
      'reports',
      this.v1.ReportsService.service.DeleteReport,
      { caller: callerToWire(caller), guid },
      trace,
    );
    return { guid: res.guid, restorableUntil: res.restorableUntil };
  }

  close(): void {
    for (const c of Object.values(this.clients)) c.close();
  }
}

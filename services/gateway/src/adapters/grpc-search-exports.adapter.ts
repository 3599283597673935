import {
  CLIENT_OPTIONS,
  callUnary,
  callerToWire,
  channelCredentials,
  dialTarget,
  grpc,
  loadQuarryProto,
  type GrpcTrust,
} from '@quarry/rpc';
import { searchParamsCodec } from '@quarry/contract';
import type { SearchExportRequest, SearchExports } from '../ports/search-exports.port';
import type { Caller, RequestTrace } from '../ports/service-clients.port';

/** The query service's ExportSearch over gRPC, on a channel of its own so a long export holds no other call. */
export class GrpcSearchExports implements SearchExports {
  private readonly client: grpc.Client;
  private readonly method = loadQuarryProto().quarry.v1.QueryService.service.ExportSearch;

  constructor(
    addr: string,
    private readonly trust: GrpcTrust,
    /** The count's deadline (an interactive call's); the write has `writeDeadlineMs`. */
    private readonly deadlineMs: number,
    private readonly writeDeadlineMs: number,
  ) {
    this.client = new grpc.Client(dialTarget(addr), channelCredentials(trust.tls), CLIENT_OPTIONS);
  }

  async count(caller: Caller, req: SearchExportRequest, trace: RequestTrace): Promise<number> {
    const res = await this.send(caller, req, { countOnly: true }, trace, this.deadlineMs);
    return res.rows;
  }

  async write(
    caller: Caller,
    req: SearchExportRequest,
    format: 'csv' | 'jsonl' | 'parquet',
    path: string,
    trace: RequestTrace & { signal?: AbortSignal },
  ): Promise<number> {
    const res = await this.send(caller, req, { format, path }, trace, this.writeDeadlineMs);
    return res.rows;
  }

  private send(
    caller: Caller,
    req: SearchExportRequest,
    extra: { countOnly?: boolean; format?: string; path?: string },
    trace: RequestTrace & { signal?: AbortSignal },
    deadlineMs: number,
  ) {
    return callUnary(
      'query',
      this.client.getChannel(),
      this.method,
      {
        caller: callerToWire(caller),
        paramsJson: searchParamsCodec.encode(req.search),
        ...(req.asOfVersion !== undefined ? { asOfVersion: req.asOfVersion } : {}),
        ...extra,
      },
      {
        requestId: trace.requestId,
        deadlineMs,
        internalToken: this.trust.internalToken,
        ...(trace.signal ? { signal: trace.signal } : {}),
      },
    );
  }

  close(): void {
    this.client.close();
  }
}

import { completeCrosstabExecute, pivotParamsCodec, type CompletePivot } from '@quarry/contract';
import { silentLogger } from '@quarry/logger';
import { GrpcServiceModule, loadQuarryProto, unary, type pb } from '@quarry/rpc';
import type { Caller } from '../ports/service-clients.port';
import { GrpcServiceClients } from './grpc-service-clients.adapter';

const v1 = loadQuarryProto().quarry.v1;
const TOKEN = 'services-internal-token-0123456789abcdef';
const caller: Caller = { userId: 'u1', userName: 'ana', admin: false, indexes: ['*'], realms: [], scopes: [] };
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const WORKBOOK = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0x00]);

/** A crosstab service that decodes the params as the real one does and answers each output's content. */
function crosstabService(seen: Array<{ params: CompletePivot; req: pb.CrosstabRequest__Output }>) {
  const log = silentLogger();
  return new GrpcServiceModule({
    name: 'crosstab',
    log,
    listenAddr: '127.0.0.1:0',
    graceMs: 500,
    serviceName: 'quarry.v1.CrosstabService',
    definition: v1.CrosstabService.service,
    implementation: {
      ExecuteCrosstab: unary<pb.CrosstabRequest__Output, pb.CrosstabResponse>(log, 'ExecuteCrosstab', async (req) => {
        seen.push({ params: pivotParamsCodec.decode(req.paramsJson), req });
        const content =
          req.output === 'xlsx'
            ? { contentType: XLSX, body: WORKBOOK }
            : { contentType: 'application/json', body: Buffer.from('{"é":[1,null]}') };
        return { content, rowCount: 3, columnCount: 1, cache: 'miss', indexVersion: 9 };
      }),
    },
    readiness: async () => undefined,
  });
}

describe('GrpcServiceClients.pivot', () => {
  const seen: Array<{ params: CompletePivot; req: pb.CrosstabRequest__Output }> = [];
  const svc = crosstabService(seen);
  let clients: GrpcServiceClients;
  beforeAll(async () => {
    await svc.start({ internalToken: TOKEN, tls: undefined });
    const addr = svc.address;
    clients = new GrpcServiceClients(
      { query: '127.0.0.1:1', crosstab: addr, chart: '127.0.0.1:1', reports: '127.0.0.1:1', ingest: '127.0.0.1:1' },
      3000,
      { internalToken: TOKEN, tls: undefined },
      silentLogger(),
    );
  });
  afterAll(async () => {
    clients.close();
    await svc.stop();
  });

  const complete = completeCrosstabExecute({
    index: 'movies',
    rows: ['Genre'],
    totals: [{ aggregationType: 'sum', field: 'Gross', showAs: 'percentOfGrandTotal' }],
    cache: false,
    saveReport: { name: 'not sent' },
  });

  it("sends the contract's completed params whole, and the call's own settings beside them", async () => {
    await clients.pivot(caller, { ...complete, output: 'json', bypassCache: true, asOfVersion: 4 }, { requestId: 'r' });
    const { output: _output, cache: _cache, verify: _verify, saveReport: _save, ...pivot } = complete;
    expect(seen[0].params).toEqual(pivot);
    expect(seen[0].req).toMatchObject({ output: 'json', bypassCache: true, asOfVersion: 4, verify: false });
  });

  it('answers text as text and a workbook as base64, encoded once', async () => {
    const json = await clients.pivot(caller, { ...complete, output: 'json', bypassCache: false }, { requestId: 'r' });
    expect(json).toMatchObject({
      table: { contentType: 'application/json', body: '{"é":[1,null]}', rowCount: 3, columnCount: 1 },
      cache: 'miss',
      indexVersion: 9,
    });
    const xlsx = await clients.pivot(caller, { ...complete, output: 'xlsx', bypassCache: false }, { requestId: 'r' });
    expect(xlsx.table).toMatchObject({ contentType: XLSX, body: WORKBOOK.toString('base64') });
  });
});

import { randomBytes } from 'node:crypto';
import { SMALL_PIE_CHART } from './datasets';
import { createIdentity, type Identity } from './identities';
import { rpcClient, type RawResponse } from './http';
import { KIND, OtlpReceiver, type ReceivedSpan } from '@quarry/testkit';
import { pngFacts } from './png';
import { linesEventually, type Topology } from './quarry-process';
import { startStackWithData, type Stack } from './stack';

/*
 * The tracing suite of docs/architecture.md "Traces", run against one stack per file: the stack exports to
 * a receiver the test runs, a chart call is made, and its one trace must hold the gateway's span, the
 * crosstab and chart services' spans, the chart worker's job and the Chromium render, linked parent to
 * child across every hop (gRPC metadata, the BullMQ job's data), with the trace id on the log lines.
 */

interface RpcBody {
  result?: { data: { data: string }; meta: { requestId: string } };
  error?: { code: number };
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

function only(spans: ReceivedSpan[], name: string, kind: number): ReceivedSpan {
  const found = spans.filter((s) => s.name === name && s.kind === kind);
  if (found.length !== 1) {
    const seen = spans.map((s) => `${s.name} (kind ${s.kind}, ${s.service})`).join(', ');
    throw new Error(`expected one ${name} span of kind ${kind}, found ${found.length} among: ${seen}`);
  }
  return found[0];
}

/** The names of the spans one chart call makes, in the order they nest. */
const CROSSTAB_RPC = 'quarry.v1.CrosstabService/ExecuteCrosstab';
const CHART_RPC = 'quarry.v1.ChartService/RenderChart';
const EXPECTED: Array<[string, number]> = [
  ['CROSSTAB.EXECUTE', KIND.SERVER],
  [CROSSTAB_RPC, KIND.CLIENT],
  [CROSSTAB_RPC, KIND.SERVER],
  [CHART_RPC, KIND.CLIENT],
  [CHART_RPC, KIND.SERVER],
  ['publish quarry-charts', KIND.PRODUCER],
  ['process quarry-charts', KIND.CONSUMER],
  ['chromium render', KIND.INTERNAL],
];

export function tracingSuite(opts: {
  topology: Topology;
  /** OTEL_EXPORTER_OTLP_PROTOCOL, or undefined to leave the default (http/protobuf). */
  protocol: 'http/json' | 'http/protobuf' | undefined;
  /** The service.name of each part's spans, as the processes of this topology name themselves. */
  services: { gateway: string; crosstab: string; chart: string; worker: string };
}): void {
  const receiver = new OtlpReceiver();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    stack = await startStackWithData({
      topology: opts.topology,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        ...(opts.protocol ? { OTEL_EXPORTER_OTLP_PROTOCOL: opts.protocol } : {}),
        // Batches leave every 200 ms instead of 5 s, so the test waits little.
        OTEL_BSP_SCHEDULE_DELAY: '200',
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
    // A hang guard: the split topology loads, then starts six processes (in two rounds) on 2 loaded cores.
  }, 300_000);

  afterAll(async () => {
    await stack?.quarry.stop();
    await receiver.stop();
  });

  const call = async (method: string, params: unknown, headers: Record<string, string> = {}) => {
    const res: RawResponse = await rpcClient(stack.quarry.baseUrl, analyst.token).call(method, params, { headers });
    return res;
  };

  /**
   * The trace of the request with this id: the gateway's span names it. Waits are hang guards: each process
   * exports its batches on its own schedule, later on a loaded machine.
   */
  const traceOf = async (requestId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> => {
    const deadline = Date.now() + 60_000;
    let root: ReceivedSpan | undefined;
    while (!root && Date.now() < deadline) {
      root = receiver.spans.find((s) => s.attributes['quarry.request_id'] === requestId && s.kind === KIND.SERVER);
      if (!root) await new Promise((r) => setTimeout(r, 50));
    }
    if (!root) throw new Error(`no span names request ${requestId}; received: ${receiver.spans.length} spans`);
    return receiver.trace(root.traceId, done, 60_000);
  };

  it('exports one trace per chart call: gateway, crosstab, chart service, the job and the Chromium render', async () => {
    const res = await call('CROSSTAB.EXECUTE', SMALL_PIE_CHART, { 'X-Request-Id': `trace-${Date.now()}` });
    const body = res.json as RpcBody;
    expect(body.error).toBeUndefined();
    expect(await pngFacts(Buffer.from(body.result!.data.data, 'base64'))).toMatchObject({ width: 640, height: 480 });
    const requestId = body.result!.meta.requestId;

    const spans = await traceOf(requestId, (s) =>
      EXPECTED.every(([name, kind]) => s.some((x) => x.name === name && x.kind === kind)),
    );
    const gateway = only(spans, 'CROSSTAB.EXECUTE', KIND.SERVER);
    const crosstabClient = only(spans, CROSSTAB_RPC, KIND.CLIENT);
    const crosstabServer = only(spans, CROSSTAB_RPC, KIND.SERVER);
    const chartClient = only(spans, CHART_RPC, KIND.CLIENT);
    const chartServer = only(spans, CHART_RPC, KIND.SERVER);
    const publish = only(spans, 'publish quarry-charts', KIND.PRODUCER);
    const job = only(spans, 'process quarry-charts', KIND.CONSUMER);
    const render = only(spans, 'chromium render', KIND.INTERNAL);

    // One trace, each span the child of the one that caused it, across threads, processes and Redis.
    expect(gateway.parentSpanId).toBe('');
    expect(crosstabClient.parentSpanId).toBe(gateway.spanId);
    expect(crosstabServer.parentSpanId).toBe(crosstabClient.spanId);
    expect(chartClient.parentSpanId).toBe(gateway.spanId);
    expect(chartServer.parentSpanId).toBe(chartClient.spanId);
    expect(publish.parentSpanId).toBe(chartServer.spanId);
    expect(job.parentSpanId).toBe(publish.spanId);
    expect(render.parentSpanId).toBe(job.spanId);
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) if (s !== gateway) expect(ids.has(s.parentSpanId)).toBe(true);

    // Each part's spans come from the process (service.name) that runs it.
    expect(gateway.service).toBe(opts.services.gateway);
    expect(crosstabClient.service).toBe(opts.services.gateway);
    expect(crosstabServer.service).toBe(opts.services.crosstab);
    expect(chartServer.service).toBe(opts.services.chart);
    expect(publish.service).toBe(opts.services.chart);
    expect(job.service).toBe(opts.services.worker);
    expect(render.service).toBe(opts.services.worker);

    expect(gateway.attributes).toMatchObject({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'CROSSTAB.EXECUTE',
      'quarry.request_id': requestId,
      'http.response.status_code': 200,
    });
    expect(crosstabServer.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.grpc.status_code': 0 });
    expect(job.attributes).toMatchObject({ 'messaging.system': 'bullmq', 'quarry.request_id': requestId });
    expect(render.attributes).toMatchObject({ 'quarry.chart.width': 640, 'quarry.chart.height': 480 });
    for (const s of spans) expect(s.statusCode).not.toBe(2);

    // The worker's log lines of this request carry the trace and the job's span.
    const lines = await linesEventually(
      () => stack.quarry.logs().filter((l) => l.includes(`"requestId":"${requestId}"`) && l.includes('"chart render')),
      (found) => found.length >= 2,
      30_000,
    );
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines)
      expect(JSON.parse(line)).toMatchObject({ trace_id: gateway.traceId, span_id: job.spanId });
    // A hang guard: the chart may start Chromium cold, and the waits above are a minute at most.
  }, 180_000);

  it("continues a caller's own trace (W3C traceparent) and records a service's refusal on every span", async () => {
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const res = await call(
      'CROSSTAB.EXECUTE',
      { index: 'movies', rows: ['No Such Field'], totals: [{ aggregationType: 'Count' }] },
      { traceparent: `00-${traceId}-${parentId}-01` },
    );
    const body = res.json as RpcBody & { error?: { code: number } };
    expect(body.error?.code).toBe(400);
    // Every span asserted below, the gateway's too: it ends after its client span, maybe in a later batch.
    const spans = await receiver.trace(
      traceId,
      (s) => byName(s, CROSSTAB_RPC).length >= 2 && byName(s, 'CROSSTAB.EXECUTE').length >= 1,
      60_000,
    );
    const gateway = only(spans, 'CROSSTAB.EXECUTE', KIND.SERVER);
    expect(gateway.parentSpanId).toBe(parentId);
    expect(gateway.attributes).toMatchObject({ 'error.type': 'INVALID_ARGUMENT', 'rpc.jsonrpc.error_code': 400 });
    const client = only(spans, CROSSTAB_RPC, KIND.CLIENT);
    const server = only(spans, CROSSTAB_RPC, KIND.SERVER);
    expect(server.parentSpanId).toBe(client.spanId);
    // gRPC INVALID_ARGUMENT (3): an error for the caller's span, the caller's mistake for the server's.
    expect(client.attributes).toMatchObject({ 'error.type': 'INVALID_ARGUMENT', 'rpc.grpc.status_code': 3 });
    expect(client.statusCode).toBe(2);
    expect(server.attributes).toMatchObject({ 'error.type': 'INVALID_ARGUMENT', 'rpc.grpc.status_code': 3 });
    expect(server.statusCode).toBe(0);
    expect(gateway.statusCode).toBe(0);
  }, 120_000);

  it(`sends ${opts.protocol ?? 'http/protobuf'} and every export decodes`, () => {
    expect(receiver.rejected).toEqual([]);
    const expected = opts.protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
    expect(new Set(receiver.contentTypes)).toEqual(new Set([expected]));
  });
}

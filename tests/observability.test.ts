import type { Identity } from './support/identities';
import { SMALL_PIE_CHART } from './support/datasets';
import { rawRequest } from './support/http';
import { freePort, makeDataDir, spawnServe, stopProc } from './support/quarry-process';
import { type Stack, useStackWithAnalyst } from './support/stack';

function metricValue(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (want.length === 0 && line.startsWith(`${name} `)) return Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.indexOf('}'));
    if (want.every((w) => inner.split(',').includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('/metrics', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(() => {
    stack = env.stack();
    analyst = env.analyst();
  });

  const scrape = async () => {
    const res = await rawRequest(stack.quarry.opsUrl, { method: 'GET', path: '/metrics' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    return res.text;
  };

  it('counts JSON-RPC calls per method and code, gRPC calls, store and render latency, moving with traffic', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) await stack.call(analyst, 'QUERIES.EXECUTE', { index: 'movies', pageSize: 1 });
    await stack.call(analyst, 'QUERIES.EXECUTE', { index: 'nope' });
    await stack.call(analyst, 'CROSSTAB.EXECUTE', SMALL_PIE_CHART);
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string>) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    expect(delta('quarry_rpc_requests_total', { method: 'QUERIES.EXECUTE', code: 'ok' })).toBe(3);
    expect(delta('quarry_rpc_requests_total', { method: 'QUERIES.EXECUTE', code: '404' })).toBe(1);
    expect(delta('quarry_rpc_duration_seconds_count', { method: 'CROSSTAB.EXECUTE' })).toBe(1);
    expect(delta('quarry_grpc_server_calls_total', { rpc: 'ExecuteQuery', code: '0' })).toBe(3);
    expect(delta('quarry_grpc_server_calls_total', { rpc: 'ExecuteQuery', code: '5' })).toBe(1);
    expect(delta('quarry_grpc_server_calls_total', { rpc: 'RenderChart', code: '0' })).toBe(1);
    expect(delta('quarry_store_operation_seconds_count', { store: 'metadata', op: 'findCredential' })).toBe(5);
    expect(delta('quarry_chart_render_seconds_count', {})).toBe(1);
    expect(after).toContain('quarry_chart_queue_jobs');
  });

  // Call counts per method are the operator's, not every caller's.
  it('is not served on the API port, whose probes say up or down and nothing more', async () => {
    const onApi = await rawRequest(stack.quarry.baseUrl, { method: 'GET', path: '/metrics' });
    expect(onApi.status).toBe(404);
    expect(onApi.text).not.toContain('quarry_rpc_requests_total');
    expect((await rawRequest(stack.quarry.baseUrl, { method: 'GET', path: '/healthz' })).json).toEqual({
      status: 'ok',
    });
    expect((await rawRequest(stack.quarry.baseUrl, { method: 'GET', path: '/readyz' })).json).toEqual({
      status: 'ready',
    });
    // The ops port listens on loopback only (QUARRY_OPS_HOST's default).
    expect(stack.quarry.logs().some((l) => l.includes('"ops endpoints listening"') && l.includes('"127.0.0.1"'))).toBe(
      true,
    );
  });
});

describe('the API port of `quarry serve` with HOST unset', () => {
  it('binds loopback only: 0.0.0.0 is an explicit choice', async () => {
    const { proc, port } = await spawnServe(
      { QUARRY_DATA_DIR: makeDataDir(), QUARRY_TARGET: 'all' },
      { unset: ['HOST'] },
    );
    try {
      const listening = proc.lines.find((l) => l.includes('"gateway listening"'));
      expect(listening && (JSON.parse(listening) as { host: string }).host).toBe('127.0.0.1');
      expect((await rawRequest(`http://127.0.0.1:${port}`, { method: 'GET', path: '/healthz' })).status).toBe(200);
    } finally {
      await stopProc(proc);
    }
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 120_000);
});

describe('ops endpoints of a process without the gateway', () => {
  it('serves /metrics, /healthz and /readyz on QUARRY_OPS_PORT', async () => {
    const opsPort = await freePort();
    const { proc } = await spawnServe({
      QUARRY_DATA_DIR: makeDataDir(),
      QUARRY_TARGET: 'query',
      QUARRY_QUERY_ADDR: `127.0.0.1:${await freePort()}`,
      QUARRY_OPS_PORT: String(opsPort),
    });
    try {
      const base = `http://127.0.0.1:${opsPort}`;
      expect((await rawRequest(base, { method: 'GET', path: '/healthz' })).status).toBe(200);
      const ready = await rawRequest(base, { method: 'GET', path: '/readyz' });
      expect(ready.json).toEqual({ status: 'ready' });
      const metrics = await rawRequest(base, { method: 'GET', path: '/metrics' });
      expect(metrics.text).toContain('quarry_grpc_server_calls_total');
      expect(metrics.text).toContain('process_cpu_user_seconds_total');
    } finally {
      await stopProc(proc);
    }
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 120_000);
});

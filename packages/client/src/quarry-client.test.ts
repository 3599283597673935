import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  QuarryClient,
  type CrosstabChartPdfResult,
  type CrosstabChartResult,
  type CrosstabCsvResult,
  type CrosstabEChartsResult,
  type CrosstabHtmlResult,
  type CrosstabJsonResult,
  type CrosstabPdfResult,
} from './quarry-client';
import type { CrosstabExecuteParams } from './contract-types.generated';
import { QuarryError } from './quarry-error';
import { reviveChartOption } from './chart-option';
import { CHART_FORMATTERS } from '@quarry/contract';

type FetchArgs = Parameters<typeof fetch>;

/** A fetch that answers one canned response and records how it was called. */
function fakeFetch(
  status: number,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const calls: Array<{ self: unknown; args: FetchArgs }> = [];
  const fn = function (this: unknown, ...args: FetchArgs) {
    // Browsers' fetch throws "Illegal invocation" when `this` is not the global object.
    if (this !== undefined && this !== globalThis)
      throw new TypeError("Failed to execute 'fetch' on 'Window': Illegal invocation");
    calls.push({ self: this, args });
    return Promise.resolve(
      new Response(JSON.stringify(body), { status, headers: { 'x-request-id': 'req-1', ...headers } }),
    );
  } as typeof fetch;
  return { fn, calls };
}

describe('QuarryClient', () => {
  it('posts one JSON-RPC request with the token to /api/v1 and resolves result.data', async () => {
    const f = fakeFetch(200, {
      jsonrpc: '2.0',
      id: 1,
      result: { data: { indexes: [], nextCursor: null }, meta: { requestId: 'req-1' } },
    });
    const client = new QuarryClient({ url: 'http://quarry.test/', token: 'qk_x', fetch: f.fn });
    await expect(client.indexes.find({ limit: 5 })).resolves.toEqual({ indexes: [], nextCursor: null });
    const [url, init] = f.calls[0].args;
    expect(url).toBe('http://quarry.test/api/v1');
    expect(init?.method).toBe('POST');
    expect((init?.headers as Record<string, string>).Authorization).toBe('Bearer qk_x');
    expect(JSON.parse(String(init?.body))).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'INDEXES.FIND',
      params: { limit: 5 },
    });
  });

  it('calls fetch unbound, as a browser requires', async () => {
    const f = fakeFetch(200, { jsonrpc: '2.0', id: 1, result: { data: {}, meta: { requestId: 'r' } } });
    const original = globalThis.fetch;
    globalThis.fetch = f.fn;
    try {
      await new QuarryClient({ url: 'http://quarry.test' }).discover();
      expect(f.calls).toHaveLength(1);
    } finally {
      globalThis.fetch = original;
    }
  });

  it('rejects with QuarryError: a JSON-RPC error, a 401 problem, and a body that is not JSON', async () => {
    const rpc = fakeFetch(200, {
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: 400,
        message: 'Bad Request',
        data: { type: 'about:blank', detail: 'pageSize must be an integer between 1 and 1000' },
      },
    });
    const err = (await new QuarryClient({ url: 'http://q', token: 't', fetch: rpc.fn }).queries
      .execute({ index: 'm', pageSize: 0 })
      .catch((e: unknown) => e)) as QuarryError;
    expect(err).toBeInstanceOf(QuarryError);
    expect([err.code, err.title, err.detail, err.requestId]).toEqual([
      400,
      'Bad Request',
      'pageSize must be an integer between 1 and 1000',
      'req-1',
    ]);

    const problem = fakeFetch(
      401,
      { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'Token is unknown' },
      { 'content-type': 'application/problem+json' },
    );
    const unauth = (await new QuarryClient({ url: 'http://q', token: 't', fetch: problem.fn }).reports
      .find()
      .catch((e: unknown) => e)) as QuarryError;
    expect([unauth.code, unauth.title, unauth.detail]).toEqual([401, 'Unauthorized', 'Token is unknown']);

    const html = {
      fn: (() => Promise.resolve(new Response('<html>proxy error</html>', { status: 502 }))) as typeof fetch,
    };
    const bad = (await new QuarryClient({ url: 'http://q', fetch: html.fn }).indexes
      .find()
      .catch((e: unknown) => e)) as QuarryError;
    expect(bad).toBeInstanceOf(QuarryError);
    expect(bad.code).toBe(502);
    expect(bad.detail).toContain('not JSON');
  });
});

describe('QuarryClient on answers that are JSON but not a response object', () => {
  it.each(['null', '[1,2]', '"text"', '42'])('rejects %s with a QuarryError, not a TypeError', async (text) => {
    const fn = (() =>
      Promise.resolve(
        new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }),
      )) as typeof fetch;
    const err = await new QuarryClient({ url: 'http://q', fetch: fn }).indexes.find().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).detail).toContain('not a JSON-RPC response');
  });
});

describe('QuarryClient when the server answers nothing', () => {
  let server: http.Server;
  let silentUrl = '';
  const sockets = new Set<import('node:net').Socket>();

  beforeAll(async () => {
    // Reads every request and never answers: a hung server.
    server = http.createServer(() => undefined);
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('rejects with code NETWORK_ERROR, naming the address, when nothing listens', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const err = (await new QuarryClient({ url, token: 't' }).indexes.find().catch((e: unknown) => e)) as QuarryError;
    expect(err).toBeInstanceOf(QuarryError);
    expect(err.code).toBe('NETWORK_ERROR');
    expect(err.isTransport).toBe(true);
    expect(err.detail).toContain(`${url}/api/v1`);
    expect(err.detail).toMatch(/ECONNREFUSED/);
  });

  it('rejects with code TIMEOUT after timeoutMs (client-wide or per call)', async () => {
    const started = Date.now();
    const err = (await new QuarryClient({ url: silentUrl, timeoutMs: 150 }).indexes
      .find()
      .catch((e: unknown) => e)) as QuarryError;
    expect(err).toBeInstanceOf(QuarryError);
    expect([err.code, err.detail]).toEqual(['TIMEOUT', 'No answer within 150 ms']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const perCall = (await new QuarryClient({ url: silentUrl }).indexes
      .find({}, { timeoutMs: 100 })
      .catch((e: unknown) => e)) as QuarryError;
    expect(perCall.code).toBe('TIMEOUT');
  });

  it('rejects with code ABORTED when the caller’s AbortSignal fires, or had fired', async () => {
    const controller = new AbortController();
    const pending = new QuarryClient({ url: silentUrl }).queries
      .execute({ index: 'movies' }, { signal: controller.signal })
      .catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ name: 'QuarryError', code: 'ABORTED' });
    const f = fakeFetch(200, { jsonrpc: '2.0', id: 1, result: { data: {}, meta: { requestId: 'r' } } });
    const before = await new QuarryClient({ url: 'http://q', fetch: f.fn }).indexes
      .find({}, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(before).toMatchObject({ code: 'ABORTED' });
    expect(f.calls).toHaveLength(0);
  });
});

describe('QuarryClient retries', () => {
  const ok = { jsonrpc: '2.0', id: 1, result: { data: { indexes: [], nextCursor: null }, meta: { requestId: 'r' } } };

  /** Fails the first `failures` calls as `how`, then answers ok; counts the calls. */
  function flaky(failures: number, how: 'network' | 503 | 400) {
    let calls = 0;
    const fn = (() => {
      calls++;
      if (calls > failures) return Promise.resolve(Response.json(ok));
      if (how === 'network') return Promise.reject(new TypeError('fetch failed'));
      const error = { code: how, message: how === 503 ? 'Service Unavailable' : 'Bad Request' };
      return Promise.resolve(Response.json({ jsonrpc: '2.0', id: 1, error }, { headers: { 'Retry-After': '0' } }));
    }) as typeof fetch;
    return { fn, calls: () => calls };
  }

  it('does not retry unless asked: one network failure is a NETWORK_ERROR', async () => {
    const f = flaky(1, 'network');
    const err = await new QuarryClient({ url: 'http://q', fetch: f.fn }).indexes.find().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NETWORK_ERROR' });
    expect(f.calls()).toBe(1);
  });

  it.each([
    ['network failures', 'network' as const],
    ['503 answers (after their Retry-After)', 503 as const],
  ])('retries an idempotent call after %s when asked, up to `retries` more tries', async (_label, how) => {
    const f = flaky(2, how);
    const client = new QuarryClient({ url: 'http://q', fetch: f.fn, retries: 2, retryDelayMs: 1 });
    await expect(client.indexes.find()).resolves.toEqual(ok.result.data);
    expect(f.calls()).toBe(3);
    const g = flaky(3, how);
    await expect(
      new QuarryClient({ url: 'http://q', fetch: g.fn, retryDelayMs: 1 }).indexes.find({}, { retries: 2 }),
    ).rejects.toBeInstanceOf(QuarryError);
    expect(g.calls()).toBe(3);
  });

  it('never retries a call that saves a report, nor a business error', async () => {
    const saving = flaky(1, 'network');
    const client = new QuarryClient({ url: 'http://q', fetch: saving.fn, retries: 3, retryDelayMs: 1 });
    await expect(client.queries.execute({ index: 'movies', saveReport: { name: 'once' } })).rejects.toMatchObject({
      code: 'NETWORK_ERROR',
    });
    expect(saving.calls()).toBe(1);
    const invalid = flaky(1, 400);
    await expect(
      new QuarryClient({ url: 'http://q', fetch: invalid.fn, retries: 3, retryDelayMs: 1 }).indexes.find(),
    ).rejects.toMatchObject({ code: 400 });
    expect(invalid.calls()).toBe(1);
  });

  it('stops waiting between tries when the signal fires', async () => {
    const f = flaky(5, 'network');
    const controller = new AbortController();
    const pending = new QuarryClient({ url: 'http://q', fetch: f.fn, retries: 5, retryDelayMs: 10_000 }).indexes
      .find({}, { signal: controller.signal })
      .catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 30);
    expect(await pending).toMatchObject({ code: 'ABORTED' });
    expect(f.calls()).toBe(1);
  });
});

describe('QuarryClient result types', () => {
  // Compile-time checks (npx tsc -p tsconfig.tests.json): format and chartType narrow the crosstab result.
  it('narrows CROSSTAB.EXECUTE by format and chartType', async () => {
    const table = {
      rowFields: [],
      columnFields: [],
      measures: [],
      columns: [],
      rows: [],
      columnTotals: [],
      grandTotal: [3],
      rowsOmitted: 0,
      columnsOmitted: 0,
    };
    const data = { contentType: 'application/json', data: table, rowCount: 0, columnCount: 1 };
    const f = fakeFetch(200, { jsonrpc: '2.0', id: 1, result: { data, meta: { requestId: 'r' } } });
    const client = new QuarryClient({ url: 'http://q', fetch: f.fn });
    const base = {
      index: 'movies',
      rows: ['Major Genre'],
      totals: [{ aggregationType: 'Count' }],
    } satisfies CrosstabExecuteParams;
    const json: CrosstabJsonResult = await client.crosstab.execute({ ...base, format: 'json' });
    expect(json.data.grandTotal).toEqual([3]);
    const typed = {
      csv: (): Promise<CrosstabCsvResult> => client.crosstab.execute({ ...base, format: 'csv' }),
      html: (): Promise<CrosstabHtmlResult> => client.crosstab.execute(base),
      chart: (): Promise<CrosstabChartResult> => client.crosstab.execute({ ...base, chartType: 'Column2D' }),
      svg: (): Promise<CrosstabChartResult> =>
        client.crosstab.execute({ ...base, chartType: 'Column2D', imageFormat: 'svg' }),
      echarts: (): Promise<CrosstabEChartsResult> =>
        client.crosstab.execute({ ...base, chartType: 'Column2D', imageFormat: 'echarts' }),
      // @ts-expect-error a JSON table is not what format "csv" answers
      wrong: (): Promise<CrosstabJsonResult> => client.crosstab.execute({ ...base, format: 'csv' }),
      notTable: (): Promise<CrosstabJsonResult> =>
        // @ts-expect-error an ECharts option is JSON, but not the JSON table
        client.crosstab.execute({ ...base, chartType: 'Column2D', imageFormat: 'echarts' }),
      // @ts-expect-error an image is not an ECharts option
      notOption: (): Promise<CrosstabEChartsResult> => client.crosstab.execute({ ...base, chartType: 'Pie2D' }),
      pdf: (): Promise<CrosstabPdfResult> => client.crosstab.execute({ ...base, format: 'pdf' }),
      chartPdf: (): Promise<CrosstabChartPdfResult> =>
        client.crosstab.execute({ ...base, chartType: 'Pie2D', format: 'pdf' }),
      notImage: (): Promise<CrosstabChartResult> =>
        // @ts-expect-error a printed chart is not a PNG or an SVG
        client.crosstab.execute({ ...base, chartType: 'Pie2D', format: 'pdf' }),
      // @ts-expect-error a printed table is not the chart's one page
      notChartPdf: (): Promise<CrosstabChartPdfResult> => client.crosstab.execute({ ...base, format: 'pdf' }),
    };
    expect(Object.keys(typed)).toHaveLength(12);
  });
});

describe('reviveChartOption', () => {
  it('sets a compact formatter wherever quarryFormatter names one, and leaves the rest alone', () => {
    const option = reviveChartOption({
      yAxis: [{ axisLabel: { quarryFormatter: 'compact', fontSize: 12 } }],
      series: [
        { label: { quarryFormatter: 'compactValue' } },
        { label: { formatter: '{b}' } },
        { label: { quarryFormatter: 'sparkles' } },
      ],
    }) as unknown as {
      yAxis: Array<{ axisLabel: { formatter: (v: number) => string } }>;
      series: Array<{ label: { formatter: unknown } }>;
    };
    expect(option.yAxis[0].axisLabel.formatter(14994348159)).toBe('15B');
    expect(option.yAxis[0].axisLabel.formatter(1234)).toBe('1.23K');
    expect((option.series[0].label.formatter as (p: unknown) => string)({ value: [2, 3, 2500000] })).toBe('2.5M');
    expect(option.series[1].label.formatter).toBe('{b}');
    expect(option.series[2].label.formatter).toBeUndefined();
  });

  it('knows exactly the formatter names the contract documents', () => {
    const named = Object.keys(CHART_FORMATTERS).map((name) => {
      const o = reviveChartOption({ label: { quarryFormatter: name } as Record<string, unknown> });
      return typeof o.label.formatter;
    });
    expect(named).toEqual(Object.keys(CHART_FORMATTERS).map(() => 'function'));
  });

  it("writes a total's format: Intl options beside the name, the scale applied first, of an item's last number", () => {
    const o = reviveChartOption({
      axis: {
        quarryFormatter: 'number',
        quarryNumberFormat: { style: 'currency', currency: 'EUR', notation: 'compact' },
      },
      label: { quarryFormatter: 'numberValue', quarryNumberFormat: { style: 'percent' }, quarryScale: 0.01 },
      odd: { quarryFormatter: 'number', quarryNumberFormat: { style: 'unit', unit: 'furlong' } },
    }) as unknown as Record<'axis' | 'label' | 'odd', { formatter: (v: unknown) => string }>;
    expect(o.axis.formatter(2_500_000)).toBe('€2.5M');
    expect(o.label.formatter({ value: [1, 2, 12.5] })).toBe('13%');
    // Options this runtime refuses: compact numbers, not a crash.
    expect(o.odd.formatter(1234)).toBe('1.23K');
  });

  it('takes another compact function', () => {
    const o = reviveChartOption({ a: { quarryFormatter: 'compact' } }, { compact: (v) => `<${v}>` }) as unknown as {
      a: { formatter: (v: number) => string };
    };
    expect(o.a.formatter(5)).toBe('<5>');
  });
});

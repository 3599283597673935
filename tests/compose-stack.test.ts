import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { rawRequest, rpcClient } from './support/http';
import { REPO_ROOT } from './support/quarry-process';
import { unwrap } from './support/stack';

/**
 * The production shape (Typesense, MongoDB, Redis, one container per target, two chart workers)
 * brought up from docker-compose.yml and driven over JSON-RPC. Needs a Docker engine.
 */
describeWithDocker('docker-compose stack (testcontainers)', () => {
  let env: StartedDockerComposeEnvironment;
  let baseUrl: string;
  let token: string;

  beforeAll(async () => {
    env = await new DockerComposeEnvironment(REPO_ROOT, 'docker-compose.yml')
      .withBuild()
      .withWaitStrategy('gateway-1', Wait.forHealthCheck())
      .withStartupTimeout(600000)
      .up();
    const gateway = env.getContainer('gateway-1');
    baseUrl = `http://${gateway.getHost()}:${gateway.getMappedPort(8080)}`;
    token = (await gateway.exec(['cat', '/data/admin-token.txt'])).output.trim();
  }, 900000);

  afterAll(async () => {
    await env?.down({ removeVolumes: true });
  }, 120000);

  it('lists the sample indexes and searches them through Typesense', async () => {
    const rpc = rpcClient(baseUrl, token);
    const found = unwrap<{ indexes: Array<{ name: string }> }>(await rpc.call('INDEXES.FIND', {}));
    expect(found.data?.indexes.map((i) => i.name)).toEqual(['airports', 'movies']);
    const q = unwrap<{ total: number; records: Array<{ Title: string }> }>(
      await rpc.call('QUERIES.EXECUTE', { index: 'movies', query: '"star wars"' }),
    );
    expect(q.data?.total).toBeGreaterThan(0);
    expect(q.data?.records.length).toBeGreaterThan(0);
  });

  it('keeps the protocol and authentication rules', async () => {
    const noAuth = await rawRequest(baseUrl, { headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers['content-type']).toBe('application/problem+json');
    const parse = await rawRequest(baseUrl, {
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: '{',
    });
    expect(parse.status).toBe(400);
    expect((parse.json as { error: { code: number } }).error.code).toBe(-32700);
    const missing = unwrap(await rpcClient(baseUrl, token).call('QUERIES.EXECUTE', {}));
    expect(missing.error).toMatchObject({ code: 400, data: { detail: 'index is required' } });
  });

  it('pages, sorts and filters on Typesense like the embedded engine', async () => {
    const rpc = rpcClient(baseUrl, token);
    const page = (p: number) =>
      rpc.call('QUERIES.EXECUTE', {
        index: 'movies',
        query: '(Major Genre):drama AND (IMDB Rating):>7',
        page: p,
        pageSize: 10,
        sort: [{ field: 'IMDB Rating', direction: 'desc' }],
      });
    const first = unwrap<{ total: number; records: Array<{ 'IMDB Rating': number }> }>(await page(1));
    const second = unwrap<{ total: number; records: Array<{ 'IMDB Rating': number }> }>(await page(2));
    expect(first.data!.total).toBeGreaterThan(20);
    const ratings = [...first.data!.records, ...second.data!.records].map((r) => r['IMDB Rating']);
    expect(ratings).toEqual([...ratings].sort((a, b) => b - a));
  });

  it('computes an HTML crosstab on the shared snapshot', async () => {
    const res = unwrap<{ contentType: string; data: string; rowCount: number }>(
      await rpcClient(baseUrl, token).call('CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Count', dynamicView: 'Directors' }],
      }),
    );
    expect(res.data?.contentType).toBe('text/html');
    expect(res.data?.rowCount).toBeGreaterThan(5);
  });

  it('exposes metrics on the ops port of the gateway, inside its container only', async () => {
    expect((await rawRequest(baseUrl, { method: 'GET', path: '/metrics' })).status).toBe(404);
    const scrape = await env
      .getContainer('gateway-1')
      .exec([
        'node',
        '-e',
        "fetch('http://127.0.0.1:9464/metrics').then(r=>r.text()).then(t=>process.stdout.write(t))",
      ]);
    expect(scrape.output).toContain('quarry_rpc_requests_total');
  });

  it('renders a chart on the chart workers and saves a report in MongoDB', async () => {
    const rpc = rpcClient(baseUrl, token);
    const chart = unwrap<{ contentType: string; report: { guid: string } }>(
      await rpc.call('CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Count' }],
        chartType: 'Pie2D',
        saveReport: { name: 'compose pie' },
      }),
    );
    expect(chart.data?.contentType).toBe('image/png');
    const meta = unwrap<{ name: string }>(await rpc.call('REPORTS.METADATA', { guid: chart.data!.report.guid }));
    expect(meta.data?.name).toBe('compose pie');
  });
});

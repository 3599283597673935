import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers';
import { describeWithDocker } from '@quarry/testkit';
import { rpcClient } from './support/http';
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
    const q = unwrap<{ total: number; records: Array<{ Title: string }> }>(await rpc.call('QUERIES.EXECUTE', { index: 'movies', query: '"star wars"' }));
    expect(q.data?.total).toBeGreaterThan(0);
    expect(q.data?.records.length).toBeGreaterThan(0);
  });

  it('renders a chart on the chart workers and saves a report in MongoDB', async () => {
    const rpc = rpcClient(baseUrl, token);
    const chart = unwrap<{ contentType: string; report: { guid: string } }>(
      await rpc.call('CROSSTAB.EXECUTE', { index: 'movies', rows: ['Major Genre'], totals: [{ aggregationType: 'Count' }], chartType: 'Pie2D', saveReport: { name: 'compose pie' } }),
    );
    expect(chart.data?.contentType).toBe('image/png');
    const meta = unwrap<{ name: string }>(await rpc.call('REPORTS.METADATA', { guid: chart.data!.report.guid }));
    expect(meta.data?.name).toBe('compose pie');
  });
});

import { createIdentity, type Identity } from './support/identities';
import { pngFacts } from './support/png';
import { freePort, linesEventually, spawnServe, stopProc, type Proc } from './support/quarry-process';
import { TestRedis } from './support/redis';
import { startStackWithData, unwrap, type Stack } from './support/stack';
import { rpcClient } from './support/http';
import { SMALL_PIE_CHART } from './support/datasets';

/**
 * Separate chart-worker processes on one queue: both take jobs, a SIGKILLed one loses no request, and
 * a Redis outage is a clear, fast error that heals by itself.
 */
describe('chart workers as separate processes', () => {
  let redis: TestRedis;
  let stack: Stack;
  let analyst: Identity;
  let workerA: Proc;
  let workerB: Proc;

  beforeAll(async () => {
    redis = new TestRedis(await freePort());
    await redis.start();
    stack = await startStackWithData({
      topology: 'all',
      env: { QUARRY_TARGET: 'gateway,query,crosstab,chart,reports', REDIS_URL: redis.url },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
    const workerEnv = {
      QUARRY_DATA_DIR: stack.dataDir,
      QUARRY_TARGET: 'chart-worker',
      REDIS_URL: redis.url,
      CHART_WORKER_CONCURRENCY: '1',
    };
    [workerA, workerB] = (await Promise.all([spawnServe(workerEnv), spawnServe(workerEnv)])).map((s) => s.proc);
  }, 120000);

  afterAll(async () => {
    await Promise.all([workerA, workerB].filter(Boolean).map((w) => stopProc(w)));
    await stack?.quarry.stop();
    await redis?.stop();
  });

  const chart = (width = 1600, height = 1200) =>
    stack.call<{ data: string; width: number }>(analyst, 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['Major Genre'],
      columns: [{ field: 'MPAA Rating' }],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Average', field: 'IMDB Rating' }],
      chartType: 'MSColumn2D',
      width,
      height,
    });
  const rendered = (p: Proc) => p.lines.filter((l) => l.includes('"chart rendered"')).length;

  it('both workers take jobs from the one queue', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => chart()));
    for (const r of results)
      expect(await pngFacts(Buffer.from(r.data!.data, 'base64'))).toMatchObject({ width: 1600, height: 1200 });
    expect(rendered(workerA)).toBeGreaterThan(0);
    expect(rendered(workerB)).toBeGreaterThan(0);
  }, 60000);

  it("carries the caller's request id onto the worker's log lines", async () => {
    const requestId = `chart-trace-${Date.now()}`;
    const res = await rpcClient(stack.quarry.baseUrl, analyst.token).call('CROSSTAB.EXECUTE', SMALL_PIE_CHART, {
      headers: { 'X-Request-Id': requestId },
    });
    expect(unwrap(res).error).toBeUndefined();
    const traced = await linesEventually(
      () => [...workerA.lines, ...workerB.lines].filter((l) => l.includes(`"requestId":"${requestId}"`)),
      (found) => found.length >= 2,
    );
    expect(traced.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([
      'chart render started',
      'chart rendered',
    ]);
  }, 30000);

  it('still answers every request when one worker is SIGKILLed mid-render', async () => {
    const startedBefore = workerA.lines.filter((l) => l.includes('"chart render started"')).length;
    const pending = Promise.all(Array.from({ length: 4 }, () => chart(3000, 2000)));
    const deadline = Date.now() + 20000;
    while (
      workerA.lines.filter((l) => l.includes('"chart render started"')).length === startedBefore &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const started = workerA.lines.filter((l) => l.includes('"chart render started"'));
    const killedJob = (JSON.parse(started[started.length - 1]) as { jobId: string }).jobId;
    await stopProc(workerA, 'SIGKILL');
    const results = await pending;
    for (const r of results) {
      expect(r.error).toBeUndefined();
      expect((await pngFacts(Buffer.from(r.data!.data, 'base64'))).width).toBe(3000);
    }
    // The job that was on the killed worker was finished by the other one.
    expect(workerB.lines.some((l) => l.includes('"chart rendered"') && l.includes(`"jobId":"${killedJob}"`))).toBe(
      true,
    );
  }, 90000);

  it('fails fast with a clear error while Redis is down and recovers when it is back', async () => {
    await redis.stop();
    const t = Date.now();
    const down = await chart(1200, 900);
    expect(Date.now() - t).toBeLessThan(3000);
    expect(down.error).toMatchObject({
      code: 503,
      data: { detail: 'The chart queue (Redis) is unreachable; charts cannot be rendered right now' },
    });
    const table = unwrap(
      await rpcClient(stack.quarry.baseUrl, analyst.token).call('QUERIES.EXECUTE', { index: 'movies', pageSize: 1 }),
    );
    expect(table.error).toBeUndefined();

    await redis.start();
    let ok = false;
    const until = Date.now() + 30000;
    while (!ok && Date.now() < until) {
      const r = await chart(1200, 900);
      ok = r.error === undefined;
      if (!ok) await new Promise((res) => setTimeout(res, 500));
    }
    expect(ok).toBe(true);
  }, 90000);
});

import { fastest } from '@quarry/testkit';
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
    // A worker's lines can trail the answers they describe: wait (up to 30 s) for both workers' lines.
    await linesEventually(
      () => [...workerA.lines, ...workerB.lines],
      () => rendered(workerA) > 0 && rendered(workerB) > 0,
      30_000,
    );
    expect(rendered(workerA)).toBeGreaterThan(0);
    expect(rendered(workerB)).toBeGreaterThan(0);
    // A hang guard: each worker starts its Chromium and draws about four large charts, one at a time.
  }, 180_000);

  it("carries the caller's request id onto the worker's log lines", async () => {
    const requestId = `chart-trace-${Date.now()}`;
    const res = await rpcClient(stack.quarry.baseUrl, analyst.token).call('CROSSTAB.EXECUTE', SMALL_PIE_CHART, {
      headers: { 'X-Request-Id': requestId },
    });
    expect(unwrap(res).error).toBeUndefined();
    const traced = await linesEventually(
      () => [...workerA.lines, ...workerB.lines].filter((l) => l.includes(`"requestId":"${requestId}"`)),
      (found) => found.length >= 2,
      30_000,
    );
    expect(traced.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([
      'chart render started',
      'chart rendered',
    ]);
  }, 60_000);

  it('still answers every request when one worker is SIGKILLed mid-render', async () => {
    // Killed as its "chart render started" line arrives, not on a poll of its log after it: a render that
    // finished before the kill would leave nothing for the other worker to finish.
    const killed = new Promise<string>((resolve) => {
      let rest = '';
      const onData = (chunk: Buffer) => {
        // Whole lines only: a chunk may end inside one.
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop() ?? '';
        const line = lines.find((l) => l.includes('"chart render started"'));
        if (!line) return;
        workerA.child.stdout!.off('data', onData);
        workerA.child.kill('SIGKILL');
        resolve((JSON.parse(line) as { jobId: string }).jobId);
      };
      workerA.child.stdout!.on('data', onData);
    });
    const pending = Promise.all(Array.from({ length: 4 }, () => chart(3000, 2000)));
    const killedJob = await killed;
    await stopProc(workerA, 'SIGKILL');
    const results = await pending;
    for (const r of results) {
      expect(r.error).toBeUndefined();
      expect((await pngFacts(Buffer.from(r.data!.data, 'base64'))).width).toBe(3000);
    }
    // The job that was on the killed worker was finished by the other one (its line may trail the answer).
    const finishedIt = (l: string) => l.includes('"chart rendered"') && l.includes(`"jobId":"${killedJob}"`);
    await linesEventually(
      () => workerB.lines,
      (lines) => lines.some(finishedIt),
      30_000,
    );
    expect(workerB.lines.some(finishedIt)).toBe(true);
    // A hang guard: the killed worker's job waits for its lock to lapse, then renders on the other one.
  }, 180_000);

  it('fails fast with a clear error while Redis is down and recovers when it is back', async () => {
    await redis.stop();
    // The fastest of up to three calls (fastest() says why): a call that waited on the queue is slow in each.
    const { ms, value: down } = await fastest(3000, () => chart(1200, 900));
    expect(ms).toBeLessThan(3000);
    expect(down.error).toMatchObject({
      code: 503,
      data: { detail: 'The chart queue (Redis) is unreachable; charts cannot be rendered right now' },
    });
    const table = unwrap(
      await rpcClient(stack.quarry.baseUrl, analyst.token).call('QUERIES.EXECUTE', { index: 'movies', pageSize: 1 }),
    );
    expect(table.error).toBeUndefined();

    await redis.start();
    // A hang guard: the clients reconnect with a growing backoff, slower on a loaded machine.
    let ok = false;
    const until = Date.now() + 60_000;
    while (!ok && Date.now() < until) {
      const r = await chart(1200, 900);
      ok = r.error === undefined;
      if (!ok) await new Promise((res) => setTimeout(res, 500));
    }
    expect(ok).toBe(true);
  }, 180_000);
});

import path from 'node:path';
import { exportCalls } from './support/exports';
import { createIdentity, type Identity } from './support/identities';
import { REPO_ROOT, runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

const VEGA = path.join(REPO_ROOT, 'node_modules', 'vega-datasets', 'data');
const MAX_PER_USER = 4;

/*
 * One user's exports do not hold up another's: the queue takes every user's first export before anyone's
 * second, and one user may have at most QUARRY_EXPORT_MAX_PER_USER queued or running. One export runs at a
 * time here (QUARRY_EXPORT_CONCURRENCY=1), each of 3 million records: first in first out, the small export
 * of a second user would wait for all of them.
 */
describe('exports are fair between users', () => {
  let stack: Stack;
  let heavy: Identity;
  let light: Identity;
  const { call, start, status, finished } = exportCalls(() => stack.quarry.baseUrl);

  beforeAll(async () => {
    stack = await startStackWithData({
      env: { QUARRY_EXPORT_CONCURRENCY: '1', QUARRY_EXPORT_MAX_PER_USER: String(MAX_PER_USER) },
      extra: async (env) => {
        const big = await runCli(['index', 'load', 'flights3m', path.join(VEGA, 'flights-3m.parquet')], env);
        if (big.code !== 0) throw new Error(big.stderr);
      },
    });
    heavy = await createIdentity(stack.dataDir, 'heavy');
    light = await createIdentity(stack.dataDir, 'light');
  }, 300_000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  const big = {
    method: 'QUERIES.EXECUTE',
    params: { index: 'flights3m', query: '*', sort: [{ field: 'delay', direction: 'desc' }] },
    format: 'csv',
  };
  const small = {
    method: 'QUERIES.EXECUTE',
    params: { index: 'movies', query: '(Major Genre):Western' },
    format: 'csv',
  };

  it("runs another user's small export before the first user's queued ones, and caps what one user queues", async () => {
    const heavyIds: string[] = [];
    for (let i = 0; i < MAX_PER_USER; i++) heavyIds.push(await start(heavy, big));
    // One more is refused, naming the setting, before anything is recorded.
    const refused = (await call(heavy, 'EXPORTS.START', big)).json as {
      error: { code: number; data: { detail: string } };
    };
    expect(refused.error.code).toBe(429);
    expect(refused.error.data.detail).toBe(
      `You have ${MAX_PER_USER} exports queued or running, as many as QUARRY_EXPORT_MAX_PER_USER (${MAX_PER_USER}) allows; start another once one has finished`,
    );
    const lightId = await start(light, small);
    expect((await finished(light, lightId, 300_000)).state).toBe('done');
    // Done while the first user's later exports still wait: it went before them, not after.
    const heavyStates = await Promise.all(heavyIds.map(async (id) => (await status(heavy, id)).state));
    expect(heavyStates.filter((s) => s === 'queued').length).toBeGreaterThanOrEqual(MAX_PER_USER - 2);
    // Every one of them still runs, whole; once they have, the first user may start again.
    for (const id of heavyIds)
      expect(await finished(heavy, id, 300_000)).toMatchObject({ state: 'done', rowsWritten: 3_000_000 });
    const again = await start(heavy, small);
    expect((await finished(heavy, again)).state).toBe('done');
  }, 900_000);
});

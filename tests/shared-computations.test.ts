import path from 'node:path';
import { VEGA } from './support/datasets';
import { openRpcPost, rawRequest } from './support/http';
import { runCli } from './support/quarry-process';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * Many callers asking the same thing at once, end to end through JSON-RPC on the real server: identical
 * crosstabs in flight are computed once and every caller gets the answer; callers whose realms differ never
 * share; a caller who goes away cancels its computation (DuckDB's statement interrupted), unless another
 * caller still waits on it. Observed through /metrics (quarry_computations_total by outcome and
 * quarry_computations_in_flight), waiting for the computation to be in flight, never for a time.
 */

/** Slow enough to be caught in flight: 1,079 distances × delay bins of flights-200k, holistic totals. */
const SLOW = {
  index: 'flights200k',
  rows: ['distance'],
  columns: [{ field: 'delay', bin: { width: 100 } }],
  totals: [
    { aggregationType: 'Median', field: 'delay' },
    { aggregationType: 'CountDistinct', field: 'time' },
    { aggregationType: 'StdDev', field: 'delay' },
  ],
  format: 'json',
};

let stack: Stack;
let ann: Identity;
let bob: Identity;
let realmed: Identity;

beforeAll(async () => {
  stack = await startStackWithData({
    env: { QUARRY_GRPC_DEADLINE_MS: '300000' },
    extra: async (env) => {
      const load = await runCli(['index', 'load', 'flights200k', path.join(VEGA, 'flights-200k.json')], env);
      if (load.code !== 0) throw new Error(load.stderr);
    },
  });
  ann = await createIdentity(stack.dataDir, 'ann');
  bob = await createIdentity(stack.dataDir, 'bob');
  realmed = await createIdentity(stack.dataDir, 'rita', {
    realms: [{ index: 'flights200k', query: 'distance:[0 TO 1000]' }],
  });
}, 600_000);

afterAll(async () => {
  await stack?.quarry.stop();
});

async function metrics() {
  const text = (await rawRequest(stack.quarry.opsUrl, { method: 'GET', path: '/metrics' })).text;
  const value = (name: string, labels: string) => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };
  const of = (outcome: string) => value('quarry_computations_total', `kind="crosstab",outcome="${outcome}"`);
  return {
    computed: of('computed'),
    joined: of('joined'),
    cancelled: of('cancelled'),
    inFlight: value('quarry_computations_in_flight', 'kind="crosstab"'),
  };
}

/** The computation ended before the test caught it in flight: the try proves nothing, and is tried again. */
class Missed extends Error {}

let fresh = 0;
/** `scenario` with a query no call has asked before (every record matches), until one try catches its moment. */
async function tries(scenario: (query: string) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await scenario(`delay:>${-10_000 - fresh++}`);
    } catch (err) {
      if (!(err instanceof Missed) || attempt >= 8) throw err;
    }
  }
}

/** Waits until the metrics say so, asking every 10 ms (a computation of a second must not slip by). */
async function until(
  what: string,
  test: (m: Awaited<ReturnType<typeof metrics>>) => boolean,
  running?: Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + 240_000;
  let settled: unknown;
  void running?.then((answer) => (settled = answer ?? 'settled'));
  while (!test(await metrics())) {
    if (settled !== undefined) throw new Missed(`answered before ${what}: ${JSON.stringify(settled).slice(0, 500)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const inFlight = (n: number, running?: Promise<unknown>) =>
  until(`${n} crosstab(s) in flight`, (m) => m.inFlight === n, running);

/** result.data and result.meta of an answer. */
function result<T>(res: { json: unknown }): { data: T; meta: { cache?: string } } {
  const body = res.json as { result?: { data: T; meta: { cache?: string } }; error?: unknown };
  if (!body.result) throw new Error(`no result: ${JSON.stringify(body.error)}`);
  return body.result;
}

function crosstab(who: Identity, params: object) {
  return rawRequest(stack.quarry.baseUrl, {
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${who.token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CROSSTAB.EXECUTE', params }),
  });
}

/** A crosstab whose client goes away on `leave()`: the connection is destroyed before any answer. */
function leavingCrosstab(who: Identity, params: object) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CROSSTAB.EXECUTE', params });
  const req = openRpcPost(stack.quarry.baseUrl, who.token, body);
  const answered = new Promise<boolean>((resolve) => {
    req.on('response', () => resolve(true));
    req.on('error', () => resolve(false));
    req.on('close', () => resolve(false));
  });
  req.end(body);
  return { leave: () => req.destroy(), answered };
}

describe('identical calls in flight', () => {
  it('computes eight identical crosstabs once and answers each caller the same table', async () => {
    await tries(async (query) => {
      const before = await metrics();
      const params = { ...SLOW, query };
      const first = crosstab(ann, params);
      await inFlight(1, first);
      const others = [ann, bob, ann, bob, ann, bob, ann].map((who) => crosstab(who, params));
      const answers = await Promise.all([first, ...others]);
      const after = await metrics();
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      const tables = answers.map((a) => JSON.stringify(result<{ data: unknown }>(a).data.data));
      expect(new Set(tables).size).toBe(1);
      expect(result<{ rowCount: number }>(answers[0]!).data.rowCount).toBeGreaterThan(1000);
      // Computed once whatever the timing: a call that came after the computation ended is a cache hit.
      expect(after.computed - before.computed).toBe(1);
      const joined = after.joined - before.joined;
      const hits = answers.filter((a) => result(a).meta.cache === 'hit').length;
      if (joined === 0) throw new Missed('the computation ended before any other call came');
      // Another user's same call shares too: the answer depends on the params and realms, not on who asks.
      expect(joined + hits).toBe(7);
      expect(after.inFlight).toBe(0);
    });
  }, 300_000);

  it('never shares between callers whose realms differ', async () => {
    const before = await metrics();
    const params = { ...SLOW, query: 'delay:>-999' };
    const [all, some] = await Promise.all([crosstab(ann, params), crosstab(realmed, params)]);
    const after = await metrics();
    expect([after.computed - before.computed, after.joined - before.joined]).toEqual([2, 0]);
    const rows = (a: typeof all) => result<{ rowCount: number }>(a).data.rowCount;
    expect(rows(some)).toBeLessThan(rows(all));
  }, 300_000);

  it('cancels a computation whose only caller went away', async () => {
    await tries(async (query) => {
      const before = await metrics();
      const lone = leavingCrosstab(ann, { ...SLOW, query });
      await inFlight(1, lone.answered);
      lone.leave();
      if (await lone.answered) throw new Missed('answered before the client left');
      // The statement is interrupted: the computation ends without its answer, counted as cancelled.
      await inFlight(0);
      const after = await metrics();
      expect([after.computed - before.computed, after.cancelled - before.cancelled]).toEqual([1, 1]);
    });
  }, 300_000);

  it('goes on for a caller still waiting when another on the same computation leaves', async () => {
    await tries(async (query) => {
      const before = await metrics();
      const params = { ...SLOW, query };
      const leaving = leavingCrosstab(ann, params);
      await inFlight(1, leaving.answered);
      const staying = crosstab(bob, params);
      await until('the second caller joined', (m) => m.joined === before.joined + 1, leaving.answered);
      leaving.leave();
      if (await leaving.answered) throw new Missed('answered before the first client left');
      const answer = await staying;
      expect(answer.status).toBe(200);
      expect(result<{ rowCount: number }>(answer).data.rowCount).toBeGreaterThan(1000);
      const after = await metrics();
      expect([after.cancelled - before.cancelled, after.inFlight]).toEqual([0, 0]);
      // The finished table was kept: the next identical call is a cache hit.
      expect(result(await crosstab(ann, params)).meta.cache).toBe('hit');
    });
  }, 300_000);
});

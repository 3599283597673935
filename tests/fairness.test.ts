import path from 'node:path';
import { SMALL_PIE_CHART, VEGA } from './support/datasets';
import { runCli } from './support/quarry-process';
import { createIdentity, startStackWithData, unwrap, type Stack } from './support/stack';
import type { Identity } from './support/identities';

/*
 * End to end through JSON-RPC: fair admission of heavy work per caller. One caller opens
 * 12 connections, each asking for a slow crosstab (1,079 distances × delay bins of flights-200k, an HTML
 * table, cache off); a second caller then asks for a small one. With 3 heavy calls at a time and
 * QUARRY_HEAVY_PER_CALLER=2, the first caller runs 2 and queues 10, so the second caller's call starts at
 * once in the third slot and answers before ANY of the first caller's (were the per-caller limit not kept,
 * the first caller would hold all 3 slots and the small call would wait for one of them; first in first out,
 * it would wait for all 12). Then, with every slot taken by two such callers, the small call goes round
 * robin: it runs at the next free slot, not after the 20 calls queued before it. Asserted on the order of
 * answers, not on times.
 */

const SLOW = {
  index: 'flights200k',
  rows: ['distance'],
  columns: [{ field: 'delay', bin: { width: 20 } }],
  totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'delay' }],
  cache: false,
};
const SMALL = {
  index: 'movies',
  rows: ['MPAA Rating'],
  totals: [{ aggregationType: 'Count' }],
  format: 'json',
  cache: false,
};
const HEAVY_CALLS = 12;

let stack: Stack;
let heavy: Identity;
let heavy2: Identity;
let light: Identity;

beforeAll(async () => {
  stack = await startStackWithData({
    env: {
      QUARRY_MAX_CONCURRENT_QUERIES: '3',
      QUARRY_HEAVY_PER_CALLER: '2',
      QUARRY_MAX_QUEUED_QUERIES: '64',
      // Hang guards, not what is tested: the last of 24 queued slow crosstabs (or of 6 large Treemaps) waits
      // for the others, which on a loaded machine can outlast the defaults of the call's deadline (30 s) and
      // the chart service's wait for a worker (30 s); a 4000 x 4000 render can outlast its own (10 s).
      QUARRY_GRPC_DEADLINE_MS: '300000',
      CHART_WAIT_TIMEOUT_MS: '300000',
      CHART_RENDER_TIMEOUT_MS: '120000',
    },
    extra: async (env) => {
      const load = await runCli(['index', 'load', 'flights200k', path.join(VEGA, 'flights-200k.json')], env);
      if (load.code !== 0) throw new Error(load.stderr);
    },
  });
  heavy = await createIdentity(stack.dataDir, 'heavy-caller');
  heavy2 = await createIdentity(stack.dataDir, 'heavy-caller-2');
  light = await createIdentity(stack.dataDir, 'light-caller');
  // Hang guards here and below, not targets: flights-200k loads and the slow crosstabs run for minutes on a
  // loaded machine (the tests assert the order of answers, never their times).
}, 300_000);

afterAll(async () => {
  await stack?.quarry.stop();
});

/** `count` slow crosstabs of `who`, each on its own connection, noting each answer in `order` as it comes. */
let distinct = 0;
function slowCalls(who: Identity, count: number, order: string[]): Array<Promise<unknown>> {
  // Each its own query (every record matches): identical calls in flight would be computed once.
  return Array.from({ length: count }, (_, i) =>
    stack
      .client(who)
      .call('CROSSTAB.EXECUTE', { ...SLOW, query: `delay:>${-100_000 - distinct++}` }, { id: i })
      .then((res) => order.push(`${who.user} ${res.status} ${unwrap(res).error?.code ?? 'ok'}`)),
  );
}

async function smallCall(order: string[]): Promise<void> {
  const small = await stack.client(light).call('CROSSTAB.EXECUTE', SMALL);
  order.push('light');
  expect(unwrap<{ rowCount: number }>(small).data?.rowCount).toBeGreaterThan(0);
}

/** Time for calls just sent on their own connections to reach the server and be running or queued. */
const settle = () => new Promise((r) => setTimeout(r, 100));

describe('fair admission of heavy crosstabs per caller, through JSON-RPC', () => {
  it('answers a second caller’s small crosstab before any of the first caller’s 12 queued slow ones', async () => {
    // The slow call alone, once: it answers, and what it answers is a big table (so the work is real).
    const alone = unwrap<{ rowCount: number; columnCount: number }>(
      await stack.client(heavy).call('CROSSTAB.EXECUTE', SLOW),
    );
    expect(alone.error).toBeUndefined();
    expect(alone.data!.rowCount * alone.data!.columnCount).toBeGreaterThan(40_000);

    const order: string[] = [];
    const heavyCalls = slowCalls(heavy, HEAVY_CALLS, order);
    await settle();
    await smallCall(order);
    await Promise.all(heavyCalls);
    // All 12 slow calls were admitted (queued, none refused) and answered, after the small one.
    expect(order).toEqual(['light', ...Array.from({ length: HEAVY_CALLS }, () => 'heavy-caller 200 ok')]);
  }, 300_000);

  it('with every slot taken by two heavy callers, runs a third caller’s small crosstab at the next free slot', async () => {
    const order: string[] = [];
    // 2 + 1 running (the per-caller limit leaves the third slot to the second caller), 21 queued.
    const heavyCalls = [...slowCalls(heavy, HEAVY_CALLS, order), ...slowCalls(heavy2, HEAVY_CALLS, order)];
    await settle();
    await smallCall(order);
    await Promise.all(heavyCalls);
    expect(order).toHaveLength(2 * HEAVY_CALLS + 1);
    expect(order.filter((o) => o !== 'light' && !o.endsWith(' 200 ok'))).toEqual([]);
    // The three calls running when it came finish first (and, on a loaded machine, the next few while the
    // small call shares the cores with them); first in first out, it would come after all 24.
    expect(order.indexOf('light')).toBeLessThanOrEqual(6);
  }, 300_000);
});

/*
 * The chart queue, end to end: BullMQ's queue is first in first out over everyone, so admission before it
 * keeps each caller to QUARRY_HEAVY_PER_CALLER renders in it (2 here). One caller sends 6 Treemaps of
 * 4000 x 4000 at once; a second caller's small pie then enters the queue behind at most the first caller's
 * 2, and answers before the first caller's last 4 (first in first out, it would answer after all 6).
 */
const TREEMAP = {
  index: 'movies',
  rows: ['Director'],
  totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross' }],
  chartType: 'Treemap',
  width: 4000,
  height: 4000,
  cache: false,
};
const LARGE_CHARTS = 6;

describe('fair admission of charts per caller, through JSON-RPC', () => {
  it('renders a second caller’s small pie before the first caller’s last 4 of 6 large Treemaps', async () => {
    // Chromium starts on the first chart: start it before the race.
    const warm = await stack.client(light).call('CROSSTAB.EXECUTE', { ...SMALL_PIE_CHART, cache: false });
    expect(warm.status).toBe(200);
    const order: string[] = [];
    const large = Array.from({ length: LARGE_CHARTS }, (_, i) =>
      stack
        .client(heavy)
        .call('CROSSTAB.EXECUTE', TREEMAP, { id: i })
        .then((res) => {
          order.push(`treemap ${res.status} ${unwrap(res).error?.code ?? 'ok'}`);
          return res;
        }),
    );
    await settle();
    const pie = await stack.client(light).call('CROSSTAB.EXECUTE', { ...SMALL_PIE_CHART, cache: false });
    order.push('pie');
    expect(pie.status).toBe(200);
    const answers = await Promise.all(large);
    expect(order).toHaveLength(LARGE_CHARTS + 1);
    expect(order.filter((o) => o !== 'pie' && o !== 'treemap 200 ok')).toEqual([]);
    expect(order.indexOf('pie')).toBeLessThanOrEqual(LARGE_CHARTS - 4);
    // Each answer is the chart asked for: a PNG of its size (the chart service checks it before returning).
    const sizes = [pie, ...answers].map((res) => {
      const data = unwrap<{ contentType: string; data: string }>(res).data!;
      const bytes = Buffer.from(data.data, 'base64');
      return `${data.contentType} ${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`;
    });
    expect(sizes).toEqual([
      `image/png ${SMALL_PIE_CHART.width}x${SMALL_PIE_CHART.height}`,
      ...answers.map(() => 'image/png 4000x4000'),
    ]);
  }, 480_000);
});

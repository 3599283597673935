#!/usr/bin/env node
// Fairness benchmark (issue #27 item 3): heavy work of one caller against another caller's small call,
// on one all-in-one process, "before" (no per-caller admission, tables rendered on the services' event
// loop: QUARRY_HEAVY_PER_CALLER=256, QUARRY_TABLE_THREADS=0) and "after" (the defaults), in one run.
//  1. Charts: caller A sends 6 Treemaps of 4000x4000 at once; caller B then asks for a 400x300 Pie2D.
//     Target: B's pie answers within 2x its idle time plus one Treemap render.
//  2. Crosstabs: 8 callers each run a 96,000-cell HTML crosstab (cache off), over and over; a ninth calls
//     INDEXES.FIND back to back. Target: INDEXES.FIND p99 under 50 ms.
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/fairness.bench.js [--rounds 3] [--seconds 10]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { VEGA, cli, startServer, rpc, fmt, PIE } = require('./lib');

const arg = (name, dflt) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : dflt;
};
const ROUNDS = arg('--rounds', 3);
const SECONDS = arg('--seconds', 10);
const LARGE = 6;
const CROSSTABS = 8;

const TREEMAP = {
  index: 'movies',
  query: '*',
  rows: ['Director'],
  totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross' }],
  chartType: 'Treemap',
  width: 4000,
  height: 4000,
};
// 480 x 200 = 96,000 cells, every one filled: a 1.2 MB HTML table.
const WIDE = {
  index: 'wide',
  query: '*',
  rows: ['r'],
  columns: [{ field: 'c' }],
  totals: [{ aggregationType: 'Sum', field: 'v' }],
  cache: false,
};

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const q = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const median = (xs) => q(xs, 0.5);
async function timed(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function prepare() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-fair-'));
  const env = { QUARRY_DATA_DIR: dataDir };
  const csv = path.join(dataDir, 'wide.csv');
  let seed = 1;
  const rand = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const lines = ['r,c,v'];
  // Every (r, c) pair at least once, then as many again at random.
  for (let r = 0; r < 480; r++) for (let c = 0; c < 200; c++) lines.push(`row${r},col${c},${rand(1000)}`);
  for (let i = 0; i < 96000; i++) lines.push(`row${rand(480)},col${rand(200)},${rand(1000)}`);
  fs.writeFileSync(csv, `${lines.join('\n')}\n`);
  await cli(['index', 'load', 'movies', path.join(VEGA, 'movies.json')], env);
  await cli(['index', 'load', 'wide', csv], env);
  const tokens = {};
  for (const name of ['a', 'b', 'finder', ...Array.from({ length: CROSSTABS }, (_, i) => `x${i}`)]) {
    await cli(['user', 'create', name, '--indexes', '*'], env);
    tokens[name] = (await cli(['token', 'create', '--user', name, '--scopes', 'query:execute,indexes:read'], env))
      .trim()
      .split('\n')
      .pop();
  }
  return { env, tokens };
}

async function charts(port, tokens) {
  const large = () => rpc(port, tokens.a, 'CROSSTAB.EXECUTE', TREEMAP);
  const pie = () => rpc(port, tokens.b, 'CROSSTAB.EXECUTE', PIE);
  for (let i = 0; i < 3; i++) await pie();
  await large();
  const idle = [];
  for (let i = 0; i < 10; i++) idle.push(await timed(pie));
  const render = [];
  for (let i = 0; i < 2; i++) render.push(await timed(large));
  const loaded = [];
  for (let r = 0; r < ROUNDS; r++) {
    const burst = Array.from({ length: LARGE }, () => large());
    // Let A's six reach the chart service first.
    await new Promise((res) => setTimeout(res, 300));
    loaded.push(await timed(pie));
    await Promise.all(burst);
  }
  const idleMs = median(idle);
  const renderMs = median(render);
  return { idleMs, renderMs, loadedMs: Math.max(...loaded), loaded, bound: 2 * idleMs + renderMs };
}

async function crosstabs(port, tokens) {
  const find = () => rpc(port, tokens.finder, 'INDEXES.FIND', {});
  const wide = (i) => rpc(port, tokens[`x${i}`], 'CROSSTAB.EXECUTE', WIDE);
  const first = await wide(0);
  if (first.rowCount !== 480 || first.columnCount !== 200 || first.data.length < 1_000_000)
    throw new Error(`the wide crosstab is not a 480 x 200, 1 MB table: ${first.rowCount} x ${first.columnCount}`);
  for (let i = 0; i < 20; i++) await find();
  const idle = [];
  for (let i = 0; i < 200; i++) idle.push(await timed(find));
  let stop = false;
  let tables = 0;
  const load = Array.from({ length: CROSSTABS }, async (_, i) => {
    while (!stop) {
      await wide(i);
      tables++;
    }
  });
  await new Promise((res) => setTimeout(res, 1500));
  const busy = [];
  const end = Date.now() + SECONDS * 1000;
  while (Date.now() < end) busy.push(await timed(find));
  stop = true;
  await Promise.all(load);
  return {
    idleP50: q(idle, 0.5),
    idleP99: q(idle, 0.99),
    busyP50: q(busy, 0.5),
    busyP99: q(busy, 0.99),
    busyMax: Math.max(...busy),
    finds: busy.length,
    over50: busy.filter((ms) => ms >= 50).length,
    tablesPerS: tables / (SECONDS + 1.5),
  };
}

async function measure(label, env, tokens, extra) {
  const server = await startServer({ ...env, ...extra });
  try {
    const c = await charts(server.port, tokens);
    const x = await crosstabs(server.port, tokens);
    return { label, c, x };
  } finally {
    await server.stop();
  }
}

async function main() {
  console.log(`load average at the start: ${os.loadavg().map(fmt).join(', ')}`);
  const { env, tokens } = await prepare();
  const runs = [
    await measure('before (FIFO, tables on the loop)', env, tokens, {
      QUARRY_HEAVY_PER_CALLER: '256',
      QUARRY_TABLE_THREADS: '0',
    }),
    await measure('after (per caller, tables in threads)', env, tokens, {}),
  ];
  // The machine is shared: its load says how much of the figures is other work.
  console.log(`load average at the end: ${os.loadavg().map(fmt).join(', ')}`);
  console.log(`machine: ${os.cpus().length} cores; ${ROUNDS} rounds of ${LARGE} Treemaps 4000x4000 by caller A`);
  console.table(
    runs.map(({ label, c }) => ({
      state: label,
      'pie idle p50 ms': fmt(c.idleMs),
      'one Treemap ms': fmt(c.renderMs),
      'pie under load, worst ms': fmt(c.loadedMs),
      'bound 2x idle + 1 render ms': fmt(c.bound),
      'pie load/idle': fmt(c.loadedMs / c.idleMs),
      'within bound': c.loadedMs <= c.bound ? 'yes' : 'NO',
    })),
  );
  console.log(`${CROSSTABS} callers running 96,000-cell HTML crosstabs (cache off) for ${SECONDS} s`);
  console.table(
    runs.map(({ label, x }) => ({
      state: label,
      'FIND idle p50/p99 ms': `${fmt(x.idleP50)} / ${fmt(x.idleP99)}`,
      'FIND busy p50 ms': fmt(x.busyP50),
      'FIND busy p99 ms': fmt(x.busyP99),
      'FIND busy max ms': fmt(x.busyMax),
      'FINDs >= 50 ms': `${x.over50} of ${x.finds}`,
      'p99 busy/idle': fmt(x.busyP99 / x.idleP99),
      'under 50 ms': x.busyP99 < 50 ? 'yes' : 'NO',
      'tables/s': fmt(x.tablesPerS),
    })),
  );
  for (const { label, c } of runs) console.log(`${label}: pie under load per round ${c.loaded.map(fmt).join(', ')} ms`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

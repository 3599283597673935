#!/usr/bin/env node
// This checkout against another build (a refactoring's "before"), side by side in one run: each build
// loads the same files into its own data directory with its own CLI (load times in turns), then both
// servers run at once and are called in turns, so the machine's background load hits each alike:
// p50/p95 of everyday calls (search, crosstab in every table format, a chart, reports), the flights-3m
// crosstabs of crosstab.bench.js, and 20 clients for a few seconds on each in turn with the server CPU
// each request took (medians of the rounds).
// Usage: npm run build && node bench/before-after.bench.js --before /other/apps/quarry/bin/quarry.js
//        [--runs 50] [--seconds 3] [--rounds 5]
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const {
  BIN,
  VEGA,
  benchData,
  cli,
  startServer,
  rpc,
  rpcOverHttp,
  cpuMsOf,
  timeTurns,
  fmt,
  clientLoops,
  FLIGHTS_CROSSTABS,
  PIE_PNG_CALL,
} = require('./lib');

const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const BEFORE = arg('--before');
const RUNS = Number(arg('--runs')) || 50;
const SECONDS = Number(arg('--seconds')) || 3;
const ROUNDS = Number(arg('--rounds')) || 5;
if (!BEFORE) {
  console.error('usage: node bench/before-after.bench.js --before <other checkout>/apps/quarry/bin/quarry.js');
  process.exit(2);
}

const FLIGHTS = path.join(VEGA, 'flights-3m.parquet');
const LOADS = [
  ['movies', path.join(VEGA, 'movies.json')],
  ['birdstrikes', path.join(VEGA, 'birdstrikes.csv')],
  ['flights', FLIGHTS, '--type', 'date=date:month', '--view', 'Destinations=destination'],
];
const BIRDS = {
  index: 'birdstrikes',
  rows: ['Origin State'],
  columns: [{ field: 'Wildlife Size' }],
  totals: [{ aggregationType: 'Sum', field: 'Cost Total $' }, { aggregationType: 'Count' }],
  cache: false,
};
const CASES = [
  { name: 'INDEXES.FIND', method: 'INDEXES.FIND', params: {} },
  {
    name: 'movies: word in any field, page of 20',
    method: 'QUERIES.EXECUTE',
    params: { index: 'movies', query: 'love', pageSize: 20, cache: false },
  },
  {
    name: 'flights-3m: origin:SFO, page 1',
    method: 'QUERIES.EXECUTE',
    params: { index: 'flights', query: 'origin:SFO', cache: false },
  },
  { name: 'birdstrikes crosstab, HTML', method: 'CROSSTAB.EXECUTE', params: BIRDS },
  { name: '  the same, JSON', method: 'CROSSTAB.EXECUTE', params: { ...BIRDS, format: 'json' } },
  { name: '  the same, XLSX', method: 'CROSSTAB.EXECUTE', params: { ...BIRDS, format: 'xlsx' } },
  {
    name: '  the same, showAs percentOfRowTotal with subtotals',
    method: 'CROSSTAB.EXECUTE',
    params: {
      ...BIRDS,
      rows: ['Origin State', 'Phase of flight'],
      totals: [{ aggregationType: 'Sum', field: 'Cost Total $', showAs: 'percentOfRowTotal' }],
    },
  },
  ...Object.values(FLIGHTS_CROSSTABS).map((c) => ({
    name: `flights-3m: ${c.name}`,
    method: 'CROSSTAB.EXECUTE',
    params: { index: 'flights', ...c.params, cache: false },
    runs: 10,
  })),
  PIE_PNG_CALL,
  { name: 'REPORTS.FIND', method: 'REPORTS.FIND', params: {} },
];
const MIXED = [
  { method: 'QUERIES.EXECUTE', params: { index: 'movies', query: 'Director:spielberg', cache: false } },
  { method: 'CROSSTAB.EXECUTE', params: BIRDS },
  { method: 'INDEXES.FIND', params: {} },
];

async function main() {
  const builds = { before: path.resolve(BEFORE), now: BIN };
  const data = {};
  for (const [name, bin] of Object.entries(builds))
    data[name] = await benchData(
      `ba-${name}`,
      LOADS.slice(0, 2),
      'query:execute,indexes:read,reports:read,reports:write',
      bin,
    );

  // The 3M-row load, each build's CLI in turns.
  const loadMs = Object.fromEntries(Object.keys(builds).map((k) => [k, []]));
  for (let run = 0; run < 3; run++)
    for (const [name, bin] of Object.entries(builds)) {
      const t = process.hrtime.bigint();
      await cli(['index', 'load', ...LOADS[2]], data[name].env, bin);
      loadMs[name].push(Number(process.hrtime.bigint() - t) / 1e6);
    }

  const servers = {};
  for (const [name, bin] of Object.entries(builds)) servers[name] = await startServer(data[name].env, bin);
  const agents = Object.fromEntries(
    Object.keys(servers).map((k) => [k, new http.Agent({ keepAlive: true, maxSockets: 20 })]),
  );
  const call = (name, method, params) => rpc(servers[name].port, data[name].token, method, params);
  try {
    // A saved report each, for REPORTS.FIND to find.
    for (const name of Object.keys(servers))
      await call(name, 'CROSSTAB.EXECUTE', { ...BIRDS, saveReport: { name: 'bench', description: 'before-after' } });
    const load = async (name, seconds) => {
      const { port, child } = servers[name];
      const cpu0 = cpuMsOf(child.pid);
      const n = await clientLoops(20, seconds, (k, i) => {
        const m = MIXED[(k + i) % MIXED.length];
        return rpcOverHttp(agents[name], port, data[name].token, m.method, m.params);
      });
      return { rate: n / seconds, cpuMs: (cpuMsOf(child.pid) - cpu0) / n };
    };
    for (const name of Object.keys(servers)) await load(name, 2);

    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rows = [
      {
        call: 'load flights-3m.parquet with --type (ms, median of 3)',
        ...Object.fromEntries(Object.entries(loadMs).map(([k, v]) => [k, fmt(median(v))])),
      },
    ];
    for (const c of CASES) {
      const fns = Object.fromEntries(Object.keys(servers).map((name) => [name, () => call(name, c.method, c.params)]));
      for (let i = 0; i < 3; i++) for (const fn of Object.values(fns)) await fn();
      const t = await timeTurns(c.runs ?? RUNS, fns);
      rows.push({
        call: `${c.name} (p50 / p95 ms)`,
        ...Object.fromEntries(Object.entries(t).map(([k, v]) => [k, `${fmt(v.p50)} / ${fmt(v.p95)}`])),
        'now / before (p50)': fmt(t.now.p50 / t.before.p50),
      });
    }
    const rounds = Object.fromEntries(Object.keys(servers).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const name of Object.keys(servers)) rounds[name].push(await load(name, SECONDS));
    const rate = Object.fromEntries(Object.entries(rounds).map(([k, r]) => [k, median(r.map((x) => x.rate))]));
    const cpu = Object.fromEntries(Object.entries(rounds).map(([k, r]) => [k, median(r.map((x) => x.cpuMs))]));
    rows.push({
      call: `20 clients, mixed calls (req/s, median of ${ROUNDS} x ${SECONDS} s)`,
      ...Object.fromEntries(Object.entries(rate).map(([k, v]) => [k, fmt(v)])),
      'now / before (p50)': fmt(rate.now / rate.before),
    });
    rows.push({
      call: '  server CPU per request (ms, median)',
      ...Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, fmt(v)])),
      'now / before (p50)': fmt(cpu.now / cpu.before),
    });
    console.table(rows);
    console.log(
      `before: ${builds.before}; ${RUNS} calls per case and build in turns; cores: ${os.cpus().length}; node ${process.version}`,
    );
  } finally {
    for (const a of Object.values(agents)) a.destroy();
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

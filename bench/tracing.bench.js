#!/usr/bin/env node
// What OpenTelemetry tracing costs (issue #28 item 11): the same `quarry serve` all-in-one started with
// tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT), on for every call, and on for 10 % of calls
// (parentbased_traceidratio), each exporting http/protobuf to a local sink; with --before, also the build
// of another checkout (the code before tracing existed). All servers run at once on the same data and are
// called in turns, so the machine's background load hits each alike: p50/p95 of everyday calls (those of
// latency.bench.js, cache: false) and of a PNG chart, then 20 clients for a few seconds on each in turn,
// five rounds, with the server CPU each request took (medians: one noisy round moves nothing).
// Usage: npm run build && node bench/tracing.bench.js [--runs 100] [--seconds 2] [--before /other/apps/quarry/bin/quarry.js]
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const {
  VEGA,
  benchData,
  startServer,
  startOtlpSink,
  rpc,
  rpcOverHttp,
  cpuMsOf,
  timeTurns,
  fmt,
  clientLoops,
  PIE_PNG_CALL,
} = require('./lib');

const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const RUNS = Number(arg('--runs')) || 100;
const SECONDS = Number(arg('--seconds')) || 2;
const ROUNDS = 5;
const BEFORE = arg('--before');

const CASES = [
  { name: 'INDEXES.FIND', method: 'INDEXES.FIND', params: {} },
  {
    name: 'movies: word in any field, page of 20',
    method: 'QUERIES.EXECUTE',
    params: { index: 'movies', query: 'love', pageSize: 20, cache: false },
  },
  {
    name: 'birdstrikes: crosstab state x size, Sum',
    method: 'CROSSTAB.EXECUTE',
    params: {
      index: 'birdstrikes',
      rows: ['Origin State'],
      columns: [{ field: 'Wildlife Size' }],
      totals: [{ aggregationType: 'Sum', field: 'Cost Total $' }],
      cache: false,
    },
  },
  PIE_PNG_CALL,
];

const MIXED = [
  { index: 'movies', query: 'love', pageSize: 20 },
  { index: 'movies', query: 'Director:spielberg' },
  { index: 'movies', query: '(Major Genre):Comedy AND (MPAA Rating):R', pageSize: 10 },
];

async function main() {
  const { env, token } = await benchData(
    'trace',
    [
      ['movies', path.join(VEGA, 'movies.json')],
      ['birdstrikes', path.join(VEGA, 'birdstrikes.csv')],
    ],
    'query:execute,indexes:read',
  );

  const sink = await startOtlpSink();
  const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
  const variants = {
    ...(BEFORE ? { before: () => startServer(env, path.resolve(BEFORE)) } : {}),
    off: () => startServer(env),
    'on (every call)': () => startServer(traced),
    'on (10 % sampled)': () =>
      startServer({ ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }),
  };
  const servers = {};
  for (const [name, start] of Object.entries(variants)) servers[name] = await start();
  const agents = Object.fromEntries(
    Object.keys(servers).map((k) => [k, new http.Agent({ keepAlive: true, maxSockets: 20 })]),
  );
  try {
    const load = async (name, seconds) => {
      const { port, child } = servers[name];
      const cpu0 = cpuMsOf(child.pid);
      const n = await clientLoops(20, seconds, (k, i) =>
        rpcOverHttp(agents[name], port, token, 'QUERIES.EXECUTE', { ...MIXED[(k + i) % MIXED.length], cache: false }),
      );
      return { rate: n / seconds, cpuMs: (cpuMsOf(child.pid) - cpu0) / n };
    };
    // Warm-up: JIT, indexes in memory, Chromium pages; not measured.
    for (const name of Object.keys(servers)) await load(name, 2);

    const rows = [];
    for (const c of CASES) {
      const fns = Object.fromEntries(
        Object.entries(servers).map(([name, s]) => [name, () => rpc(s.port, token, c.method, c.params)]),
      );
      for (let i = 0; i < 5; i++) for (const fn of Object.values(fns)) await fn();
      const t = await timeTurns(c.runs ?? RUNS, fns);
      rows.push({
        call: `${c.name} (p50 / p95 ms)`,
        ...Object.fromEntries(Object.entries(t).map(([k, v]) => [k, `${fmt(v.p50)} / ${fmt(v.p95)}`])),
      });
    }
    const rounds = Object.fromEntries(Object.keys(servers).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const name of Object.keys(servers)) rounds[name].push(await load(name, SECONDS));
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    rows.push({
      call: `20 clients searching movies (req/s, median of ${ROUNDS} x ${SECONDS} s)`,
      ...Object.fromEntries(Object.entries(rounds).map(([k, r]) => [k, fmt(median(r.map((x) => x.rate)))])),
    });
    rows.push({
      call: '  server CPU per request (ms, median)',
      ...Object.fromEntries(Object.entries(rounds).map(([k, r]) => [k, fmt(median(r.map((x) => x.cpuMs)))])),
    });
    console.table(rows);
    console.log(
      `${RUNS} calls per case and server in turns (chart: ${CASES[3].runs}); ${sink.stats.exports} OTLP exports ` +
        `(${fmt(sink.stats.bytes / 1024)} KB) received; cores: ${os.cpus().length}; node ${process.version}`,
    );
  } finally {
    for (const a of Object.values(agents)) a.destroy();
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    await sink.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

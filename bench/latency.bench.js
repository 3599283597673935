#!/usr/bin/env node
// Latency of everyday calls on small indexes (issue 18): movies (3,201 records) and birdstrikes (10,000),
// `quarry serve` all-in-one, calls one after another over one kept-alive connection (p50 of 30), each with
// `cache: false` so the result cache hides nothing; beside the same answers written by hand on DuckDB
// in-process over the same files (what a user would otherwise run), the gateway's floor (GET /healthz, no
// auth, no service) and 20 concurrent clients searching movies.
// With --otel the server traces every call (OTEL_EXPORTER_OTLP_ENDPOINT at a local sink, http/protobuf):
// run it beside a run without, under one lock, to see what tracing costs (bench/README.md "Tracing").
// Usage: npm run build && node bench/latency.bench.js [--runs 30] [--seconds 5] [--otel]
const os = require('node:os');
const path = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');
const http = require('node:http');
const {
  VEGA,
  benchData,
  startServer,
  startOtlpSink,
  rpc,
  rpcOverHttp,
  cpuMsOf,
  timeIt,
  fmt,
  clientLoops,
  EVERYDAY_SEARCHES,
} = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 30;
const SECONDS = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 5;
const OTEL = process.argv.includes('--otel');

const CASES = [
  {
    name: 'INDEXES.FIND (no data touched)',
    method: 'INDEXES.FIND',
    params: {},
    target: 5,
  },
  {
    name: 'movies: word in any field, page of 20',
    method: 'QUERIES.EXECUTE',
    params: { index: 'movies', query: 'love', pageSize: 20 },
    hand: `SELECT *, count(*) OVER () AS total FROM movies WHERE regexp_matches(lower(concat_ws(' ', "Title", "MPAA Rating", "Distributor", "Source", "Major Genre", "Creative Type", "Director")), '\\blove\\b') ORDER BY rowid LIMIT 20`,
    target: 5,
  },
  {
    name: 'movies: (Major Genre):Drama sorted by rating',
    method: 'QUERIES.EXECUTE',
    params: { index: 'movies', query: '(Major Genre):Drama', sort: [{ field: 'IMDB Rating', direction: 'desc' }] },
    hand: `SELECT *, count(*) OVER () AS total FROM movies WHERE "Major Genre" = 'Drama' ORDER BY "IMDB Rating" DESC NULLS LAST LIMIT 50`,
    target: 5,
  },
  {
    name: 'birdstrikes: phrase OR open range, page of 50',
    method: 'QUERIES.EXECUTE',
    params: {
      index: 'birdstrikes',
      query: '(Wildlife Species):"turkey vulture" OR (Cost Total $):>100000',
      pageSize: 50,
    },
    hand: `SELECT *, count(*) OVER () AS total FROM birdstrikes WHERE regexp_matches(lower("Wildlife Species"), '\\bturkey vulture\\b') OR "Cost Total $" > 100000 ORDER BY rowid LIMIT 50`,
    target: 5,
  },
  {
    name: 'birdstrikes: crosstab state x size, Sum',
    method: 'CROSSTAB.EXECUTE',
    params: {
      index: 'birdstrikes',
      rows: ['Origin State'],
      columns: [{ field: 'Wildlife Size' }],
      totals: [{ aggregationType: 'Sum', field: 'Cost Total $' }],
    },
    hand: `SELECT "Origin State", "Wildlife Size", sum("Cost Total $") FROM birdstrikes GROUP BY GROUPING SETS (("Origin State", "Wildlife Size"), ("Origin State"), ("Wildlife Size"), ())`,
    target: 10,
  },
];

const MIXED = EVERYDAY_SEARCHES;

async function main() {
  const { env, token } = await benchData(
    'lat',
    [
      ['movies', path.join(VEGA, 'movies.json')],
      ['birdstrikes', path.join(VEGA, 'birdstrikes.csv')],
    ],
    'query:execute,indexes:read',
  );

  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await db.connect();
  await connection.run(`CREATE TABLE movies AS SELECT * FROM read_json_auto('${path.join(VEGA, 'movies.json')}')`);
  await connection.run(
    `CREATE TABLE birdstrikes AS SELECT * FROM read_csv_auto('${path.join(VEGA, 'birdstrikes.csv')}')`,
  );
  const hand = async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS();

  const sink = OTEL ? await startOtlpSink() : undefined;
  const server = await startServer(sink ? { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : env);
  try {
    // 20 clients, each with its own kept-alive connection, mixed searches; once over node:http (a load
    // generator's client) and once over fetch, with the CPU each side used per request.
    const load = async (send, seconds = SECONDS) => {
      const server0 = cpuMsOf(server.child.pid);
      const client0 = process.cpuUsage();
      const n = await clientLoops(20, seconds, (k, i) => send({ ...MIXED[(k + i) % MIXED.length], cache: false }));
      const client = process.cpuUsage(client0);
      return {
        rate: n / seconds,
        serverMs: (cpuMsOf(server.child.pid) - server0) / n,
        clientMs: (client.user + client.system) / 1000 / n,
      };
    };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    // Warm-up: JIT, the indexes read into memory, pooled connections; not measured.
    await load((p) => rpcOverHttp(agent, server.port, token, 'QUERIES.EXECUTE', p), 3);
    const livez = () => fetch(`http://127.0.0.1:${server.port}/healthz`).then((r) => r.text());
    for (let i = 0; i < 30; i++) await livez();
    const floor = await timeIt(RUNS, livez);
    const rows = [];
    for (const c of CASES) {
      const params = c.method === 'INDEXES.FIND' ? c.params : { ...c.params, cache: false };
      const call = () => rpc(server.port, token, c.method, params);
      for (let i = 0; i < 10; i++) await call();
      const e2e = await timeIt(RUNS, call);
      let direct;
      if (c.hand) {
        for (let i = 0; i < 5; i++) await hand(c.hand);
        direct = await timeIt(RUNS, () => hand(c.hand));
      }
      rows.push({
        call: c.name,
        'p50 ms': fmt(e2e.p50),
        'p95 ms': fmt(e2e.p95),
        target: `<= ${c.target}`,
        ok: e2e.p50 <= c.target ? 'yes' : 'NO',
        'DuckDB by hand p50 ms': direct ? fmt(direct.p50) : '-',
      });
    }
    const viaHttp = await load((p) => rpcOverHttp(agent, server.port, token, 'QUERIES.EXECUTE', p));
    const viaFetch = await load((p) => rpc(server.port, token, 'QUERIES.EXECUTE', p));
    agent.destroy();
    const rate = viaHttp.rate;
    rows.push({
      call: '20 clients searching movies (mixed)',
      'p50 ms': '-',
      'p95 ms': '-',
      target: '>= 1000 req/s',
      ok: rate >= 1000 ? 'yes' : 'NO',
      'DuckDB by hand p50 ms': '-',
    });
    console.table(rows);
    const perRequest = (r) => `server ${fmt(r.serverMs)} ms + client ${fmt(r.clientMs)} ms of CPU per request`;
    console.log(`20 clients over node:http: ${fmt(viaHttp.rate)} req/s (${perRequest(viaHttp)})`);
    console.log(`20 clients over fetch:     ${fmt(viaFetch.rate)} req/s (${perRequest(viaFetch)})`);
    console.log(`gateway floor (GET /healthz): p50 ${fmt(floor.p50)} ms`);
    console.log(`${RUNS} sequential calls each; cores: ${os.cpus().length}; node ${process.version}`);
    console.log(
      sink
        ? `tracing on: every call traced, ${sink.stats.exports} OTLP exports (${fmt(sink.stats.bytes / 1024)} KB) received`
        : 'tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)',
    );
  } finally {
    await server.stop();
    await sink?.stop();
    connection.closeSync();
    db.closeSync();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

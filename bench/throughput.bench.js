#!/usr/bin/env node
// Everyday searches at 20 clients (issue 62): `quarry serve` all-in-one on movies, five mixed searches
// with `cache: false`, against a bare node:http server in its own process answering the very same bodies
// (each request body looked up in the answers Quarry gave, sent with the same headers): what the machine
// could do for those bytes with no work at all. In turns, rounds alternating, 20 kept-alive clients each.
// Then where Quarry's time goes: the server is run once more under --cpu-prof for one load period, and
// every sampled microsecond of every thread (the gateway's and the services' worker) is put in a bucket
// by the code it was in (the first matching rule below, on the innermost frame's file).
// Usage: npm run build && node bench/throughput.bench.js [--seconds 5] [--rounds 3]
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { VEGA, EVERYDAY_SEARCHES, benchData, startServer, cpuMsOf, fmt, clientLoops, postOverHttp } = require('./lib');

const arg = (name) => (process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : undefined);
const SECONDS = arg('--seconds') || 5;
const ROUNDS = arg('--rounds') || 3;

const MIXED = EVERYDAY_SEARCHES.map((p) => ({ ...p, cache: false }));

const bodyOf = (params) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'QUERIES.EXECUTE', params });

const post = postOverHttp;

/** The bare server: a child process answering each recorded body with Quarry's answer to it. */
const BARE = `
const http = require('node:http');
const answers = new Map(JSON.parse(process.env.ANSWERS));
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const a = answers.get(Buffer.concat(chunks).toString());
    if (!a) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, a.headers);
    res.end(a.text);
  });
}).listen(0, '127.0.0.1', function () { console.log('PORT ' + this.address().port); });
`;

function startBare(answers) {
  const child = spawn(process.execPath, ['-e', BARE], {
    env: { ...process.env, ANSWERS: JSON.stringify([...answers]) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => {
      const m = /PORT (\d+)/.exec(d.toString());
      if (!m) reject(new Error(`bare server: ${d}`));
      else
        resolve({ child, port: Number(m[1]), stop: () => new Promise((r) => (child.once('exit', r), child.kill())) });
    });
  });
}

/** The same POST through fetch (undici): what a JavaScript client sees, heavier on the client's side. */
async function viaFetch(port, token, body) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** Requests per second and server CPU per request of 20 clients for `seconds` (over node:http, or fetch). */
async function load(port, pid, token, seconds, client = 'http') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  const cpu0 = cpuMsOf(pid);
  const n = await clientLoops(20, seconds, async (k, i) => {
    const body = bodyOf(MIXED[(k + i) % MIXED.length]);
    const res = client === 'http' ? await post(agent, port, token, body) : await viaFetch(port, token, body);
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 300)}`);
  });
  agent.destroy();
  return { rate: n / seconds, cpuMs: (cpuMsOf(pid) - cpu0) / n };
}

/** Where sampled time went, by the innermost frame's file: first matching rule wins. */
const IDLE = 'idle (waiting for I/O or work)';
const STARTUP = 'start-up (loading modules; not per request)';
const BUCKETS = [
  // A thread pool's workers wait in Atomics.wait: that is idle too.
  [IDLE, (f) => f.functionName === '(idle)' || f.functionName === 'atomicsWaitLoop'],
  [
    STARTUP,
    (f) =>
      /modules\/cjs\/loader|modules\/esm|package_json_reader|bootstrap\/realm/.test(f.url) ||
      ['wrapSafe', 'internalModuleStat', 'readFileUtf8', 'realpathSync'].includes(f.functionName),
  ],
  ['crypto (token hash, HMAC)', (f) => /internal\/crypto/.test(f.url)],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['V8 and native, no JS frame', (f) => f.functionName === '(program)'],
  ['DuckDB (the search itself)', (f) => /@duckdb|duckdb/.test(f.url)],
  ['gRPC (grpc-js, http2)', (f) => /@grpc|node:http2|internal\/http2/.test(f.url)],
  ['protobuf (proto-loader, protobufjs)', (f) => /protobufjs|proto-loader|long\//.test(f.url)],
  [
    'HTTP (node:http, net, streams)',
    (f) => /node:(_http|http|net|stream|internal\/streams|internal\/http)|_http_/.test(f.url),
  ],
  [
    'Express and its middleware',
    (f) => /node_modules\/(express|router|body-parser|finalhandler|send|serve-static|cors)\//.test(f.url),
  ],
  ['logging (pino)', (f) => /pino|sonic-boom|thread-stream/.test(f.url)],
  ['metrics (prom-client)', (f) => /prom-client/.test(f.url)],
  ['params (zod)', (f) => /node_modules\/zod\//.test(f.url)],
  [
    'metadata store (token and catalog reads, SQLite)',
    (f) => /better-sqlite3|authenticate|metadata-store|credential/.test(f.url),
  ],
  ['audit trail', (f) => /audit/.test(f.url)],
  ['rate limits and fairness', (f) => /rate-limit|limiter|fair|bucket/.test(f.url)],
  ['result cache and shared computations', (f) => /result-cache/.test(f.url)],
  ['query language (parse, compile)', (f) => /query-language|compile-duckdb|compile-predicate/.test(f.url)],
  ['in-memory search', (f) => /adapters\/memory/.test(f.url)],
  ['Quarry gateway (framing, dispatch, answers)', (f) => /services\/gateway\//.test(f.url)],
  ['Quarry services (query, rpc, runtime, contract)', (f) => /services\/|packages\//.test(f.url)],
  ['Node internals (timers, async hooks, buffers, JSON)', (f) => /^node:|internal\//.test(f.url) || f.url === ''],
  ['other node_modules', (f) => /node_modules/.test(f.url)],
];

function breakdown(dir) {
  const totals = new Map();
  let all = 0;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    // Each sample's time is the delta before the next one.
    const us = new Map();
    prof.samples.forEach((id, i) => us.set(id, (us.get(id) ?? 0) + (prof.timeDeltas[i + 1] ?? 0)));
    for (const [id, t] of us) {
      const frame = byId.get(id).callFrame;
      const name = BUCKETS.find(([, test]) => test(frame))?.[0] ?? 'other';
      totals.set(name, (totals.get(name) ?? 0) + t);
      all += t;
    }
  }
  return { totals, all };
}

async function main() {
  const { env, token } = await benchData('tp', [['movies', path.join(VEGA, 'movies.json')]], 'query:execute');
  let quarry = await startServer(env);
  let bare;
  try {
    // Warm-up (JIT, the version read into memory), then the answers the bare server will give.
    await load(quarry.port, quarry.child.pid, token, 3);
    const agent = new http.Agent({ keepAlive: true });
    const answers = new Map();
    for (const p of MIXED) {
      const res = await post(agent, quarry.port, token, bodyOf(p));
      const headers = Object.fromEntries(
        Object.entries(res.headers).filter(
          ([k]) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k),
        ),
      );
      answers.set(bodyOf(p), { headers, text: res.text });
    }
    agent.destroy();
    bare = await startBare(answers);
    await load(bare.port, bare.child.pid, token, 2);
    const rounds = [];
    for (const client of ['http', 'fetch']) {
      for (let r = 0; r < ROUNDS; r++) {
        const q = await load(quarry.port, quarry.child.pid, token, SECONDS, client);
        const b = await load(bare.port, bare.child.pid, token, SECONDS, client);
        rounds.push({ client, q, b, ratio: q.rate / b.rate });
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.table(
      rounds.map((r, i) => ({
        client: r.client === 'http' ? 'node:http' : 'fetch',
        round: (i % ROUNDS) + 1,
        'quarry req/s': fmt(r.q.rate),
        'bare node:http req/s': fmt(r.b.rate),
        'quarry / bare': `${fmt(r.ratio * 100)} %`,
        'quarry server CPU ms/req': fmt(r.q.cpuMs),
        'bare server CPU ms/req': fmt(r.b.cpuMs),
      })),
    );
    for (const client of ['http', 'fetch'])
      console.log(
        `median quarry / bare, clients on ${client === 'http' ? 'node:http' : 'fetch'}: ${fmt(median(rounds.filter((r) => r.client === client).map((r) => r.ratio)) * 100)} % (target >= 50 %)`,
      );
    await quarry.stop();
    quarry = undefined;

    // The same load once more under the profiler, every thread of the server.
    const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-prof-'));
    quarry = await startServer(env, undefined, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=200']);
    await load(quarry.port, quarry.child.pid, token, 2);
    // Long enough that start-up's samples are few beside the load's.
    const profiled = await load(quarry.port, quarry.child.pid, token, 3 * SECONDS);
    await quarry.stop();
    quarry = undefined;
    const { totals, all } = breakdown(profDir);
    const idle = totals.get(IDLE) ?? 0;
    const startup = totals.get(STARTUP) ?? 0;
    totals.delete(IDLE);
    totals.delete(STARTUP);
    const busy = all - idle - startup;
    const perRequest = (us) => us / (profiled.rate * 3 * SECONDS);
    console.table(
      [...totals]
        .sort((a, b) => b[1] - a[1])
        .map(([what, us]) => ({
          'where the busy time went (every thread)': what,
          '% of busy': fmt((us / busy) * 100),
          'µs per request': fmt(perRequest(us)),
        })),
    );
    console.log(
      `busy ${fmt(perRequest(busy))} µs per request over all threads (the profiler's own cost included); idle ${fmt((idle / all) * 100)} % and start-up ${fmt((startup / all) * 100)} % of the samples, left out`,
    );
    console.log(
      `profiled: ${fmt(profiled.rate)} req/s under the profiler; ${fs.readdirSync(profDir).length} thread profiles; cores: ${os.cpus().length}; node ${process.version}`,
    );
    if (process.argv.includes('--keep')) console.log(`profiles kept in ${profDir}`);
    else fs.rmSync(profDir, { recursive: true, force: true });
  } finally {
    await quarry?.stop();
    await bare?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

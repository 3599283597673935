// Helpers shared by the bench scripts: run the built CLI, start the server, time things.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'apps', 'quarry', 'bin', 'quarry.js');
const VEGA = path.join(ROOT, 'node_modules', 'vega-datasets', 'data');

/** The CLI of this checkout, or of the build whose bin is `bin`. */
function cli(argv, env, bin = BIN) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [bin, ...argv], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv.join(' ')} exited ${code}: ${err}`))));
  });
}

/** `quarry serve` of this checkout, or of the build whose bin is `bin` (another checkout, to compare). */
function startServer(env, bin = BIN, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve'], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d) => {
      buf += d.toString();
      const m = /"port":(\d+),"msg":"quarry ready"/.exec(buf);
      if (m) {
        child.stdout.off('data', onData);
        // The server's errors reach the bench's reader: a failed call's cause is in them.
        let rest = '';
        child.stdout.on('data', (chunk) => {
          const lines = (rest + chunk.toString()).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) if (/"level":(50|60)/.test(line)) process.stderr.write(`server: ${line}\n`);
        });
        resolve({
          child,
          port: Number(m[1]),
          stop: () =>
            new Promise((r) => {
              child.once('exit', r);
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (c) => reject(new Error(`server exited ${c}: ${buf.slice(-2000)}`)));
  });
}

async function rpc(port, token, method, params) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result.data;
}

/**
 * The same call over node:http with kept-alive sockets: a load generator's client (as autocannon's),
 * lighter than fetch, so on a 2-core machine more of the CPU goes to the server being measured.
 */
function rpcOverHttp(agent, port, token, method, params) {
  return callOverHttp(agent, port, token, method, params).then(({ parsed }) => {
    if (parsed.error) throw new Error(`${method}: ${JSON.stringify(parsed.error)}`);
    return parsed.result.data;
  });
}

/**
 * A JSON-RPC body POSTed to /api/v1 over `agent`: the status, headers and body text whatever the status; a
 * connection error is status 0 with its message as the text.
 */
function postOverHttp(agent, port, token, body) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path: '/api/v1',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', (err) => resolve({ status: 0, headers: {}, text: err.message, failed: true }));
    req.end(body);
  });
}

/**
 * The call's HTTP status and parsed body whatever the status ({} when the body is not JSON, as a 5xx
 * may be); a connection error is status 0.
 */
async function callOverHttp(agent, port, token, method, params) {
  const res = await postOverHttp(agent, port, token, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  if (res.failed) return { status: 0, parsed: { error: { message: res.text } } };
  let parsed;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    parsed = {};
  }
  return { status: res.status, parsed };
}

/** Everyday searches on movies: a word, a field, a range sorted, a boolean, a prefix on page 2. */
const EVERYDAY_SEARCHES = [
  { index: 'movies', query: 'love', pageSize: 20 },
  { index: 'movies', query: 'Director:spielberg' },
  { index: 'movies', query: '(IMDB Rating):[8 TO 10]', sort: [{ field: 'IMDB Rating', direction: 'desc' }] },
  { index: 'movies', query: '(Major Genre):Comedy AND (MPAA Rating):R', pageSize: 10 },
  { index: 'movies', query: 'star*', page: 2, pageSize: 20 },
];

/** CPU milliseconds a process has used so far (Linux /proc), or NaN elsewhere. */
function cpuMsOf(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

async function timeIt(n, fn) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
  return { p50: q(0.5), p95: q(0.95) };
}

/**
 * p50 and p95 of each function of `fns` (an object of named functions), called in turns, n times each,
 * so that background load hits them alike.
 */
async function timeTurns(n, fns) {
  const ms = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (let i = 0; i < n; i++) {
    for (const [k, fn] of Object.entries(fns)) {
      const t = process.hrtime.bigint();
      await fn();
      ms[k].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  const stats = (xs) => {
    xs.sort((x, y) => x - y);
    return { p50: xs[Math.floor(xs.length / 2)], p95: xs[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] };
  };
  return Object.fromEntries(Object.entries(ms).map(([k, xs]) => [k, stats(xs)]));
}

/** p50 and p95 of each of two functions, called in turns so that background load hits both alike. */
function timePair(n, a, b) {
  return timeTurns(n, { a, b });
}

/**
 * flights-3m.parquet loaded as "flights" and served, beside the same records in an in-memory DuckDB with
 * two threads: `call` is CROSSTAB.EXECUTE end to end (json, no result cache), `hand` runs SQL on DuckDB.
 */
async function flightsCrosstabBench(prefix) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const file = path.join(VEGA, 'flights-3m.parquet');
  const { dataDir, env, token } = await benchData(prefix, [['flights', file]]);
  const server = await startServer(env);
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await db.connect();
  await connection.run(`CREATE TABLE flights AS SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`);
  return {
    hand: async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS(),
    call: (params) =>
      rpc(server.port, token, 'CROSSTAB.EXECUTE', { index: 'flights', format: 'json', cache: false, ...params }),
    close: async () => {
      await server.stop();
      connection.closeSync?.();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const fmt = (x) => Math.round(x * 100) / 100;

/**
 * An OTLP/HTTP endpoint that takes every trace export and answers 200 without decoding it (what a
 * collector does with it is not Quarry's cost): for benches run with tracing on.
 */
function startOtlpSink() {
  const stats = { exports: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (d) => (stats.bytes += d.length));
    req.on('end', () => {
      stats.exports++;
      res.writeHead(200, { 'content-type': req.headers['content-type'] || 'application/x-protobuf' });
      res.end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        stats,
        stop: () => new Promise((r) => server.close(r)),
      }),
    ),
  );
}

/** A user "bench" who may read every index, and a token of it with `scopes`. */
async function benchToken(env, scopes = 'query:execute', bin = BIN) {
  await cli(['user', 'create', 'bench', '--indexes', '*'], env, bin);
  return (await cli(['token', 'create', '--user', 'bench', '--scopes', scopes], env, bin)).trim().split('\n').pop();
}

/**
 * A fresh data directory (`quarry-bench-<prefix>-…` in the temp dir) with `loads` loaded, each
 * `[index, file, ...options of quarry index load]`, and a token of the user "bench" with `scopes`;
 * made by the CLI of `bin` when given (another checkout keeps its own data directory).
 */
async function benchData(prefix, loads, scopes, bin = BIN) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-bench-${prefix}-`));
  const env = { QUARRY_DATA_DIR: dataDir };
  for (const [name, file, ...options] of loads) await cli(['index', 'load', name, file, ...options], env, bin);
  return { dataDir, env, token: await benchToken(env, scopes, bin) };
}

/**
 * How many calls `clients` concurrent clients make in `seconds`, each calling `fn(client, call)` back to
 * back (`call` counts that client's calls from 0).
 */
async function clientLoops(clients, seconds, fn) {
  const end = Date.now() + seconds * 1000;
  let calls = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let call = 0; Date.now() < end; call++) {
        await fn(client, call);
        calls++;
      }
    }),
  );
  return calls;
}

/** Proportional set size in kB (shared pages split between the processes sharing them), 0 once gone. */
function pssKb(pid) {
  try {
    const m = /Pss:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * A process and all its descendants (redis-server, Chromium...), the process first: each with its RSS
 * (from ps; shared pages count once per process) and PSS in kB (Linux /proc) and its command name.
 */
function processTree(pid) {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,comm='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => {
      const [p, pp, kb, ...comm] = l.trim().split(/\s+/);
      return { pid: Number(p), ppid: Number(pp), rssKb: Number(kb), comm: comm.join(' ') };
    });
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of table)
      if (tree.has(p.ppid) && !tree.has(p.pid)) {
        tree.add(p.pid);
        grew = true;
      }
  }
  return table
    .filter((p) => tree.has(p.pid))
    .sort((a, b) => (a.pid === pid ? -1 : b.pid === pid ? 1 : 0))
    .map(({ pid: p, rssKb, comm }) => ({ pid: p, rssKb, pssKb: pssKb(p), comm }));
}

/** The small chart the chart benches ask for beside heavy work: a 400x300 pie of movies by MPAA rating. */
const PIE = {
  index: 'movies',
  query: '*',
  rows: ['MPAA Rating'],
  totals: [{ aggregationType: 'Count' }],
  chartType: 'Pie2D',
  width: 400,
  height: 300,
};

/** The everyday chart the before/after benches time: a 640x480 PNG pie of movies by genre, uncached. */
const PIE_PNG_CALL = {
  name: 'movies: Pie2D chart, PNG 640x480',
  method: 'CROSSTAB.EXECUTE',
  params: {
    index: 'movies',
    rows: ['Major Genre'],
    totals: [{ aggregationType: 'Count' }],
    chartType: 'Pie2D',
    width: 640,
    height: 480,
    cache: false,
  },
  runs: 20,
};

/** A TCP port nothing listens on now (for a private redis-server or an ops port). */
const freePort = () =>
  new Promise((res) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });

/** The grouping sets of an origin x month crosstab on flights, as a DuckDB user writes them. */
const FLIGHTS_BY_MONTH = `GROUPING SETS ((origin, month), (origin), (month), ())`;
/** Crosstabs on flights-3m.parquet (loaded as `flights`) and the same written by hand on DuckDB. */
const FLIGHTS_CROSSTABS = {
  measures: {
    name: 'origin x month: Sum(delay), Count, distinct destinations',
    params: {
      query: '*',
      rows: ['origin'],
      columns: [{ field: 'date' }],
      totals: [
        { aggregationType: 'Sum', field: 'delay' },
        { aggregationType: 'Count' },
        { aggregationType: 'Count', dynamicView: 'Destinations' },
      ],
    },
    hand: `SELECT origin, date_trunc('month', "date") AS month, sum(delay), count(*), count(DISTINCT destination) FROM flights GROUP BY ${FLIGHTS_BY_MONTH}`,
  },
  delayed: {
    name: 'delay:[60 TO 120]: origin x month, Average(distance), Max(delay)',
    params: {
      query: 'delay:[60 TO 120]',
      rows: ['origin'],
      columns: [{ field: 'date' }],
      totals: [
        { aggregationType: 'Average', field: 'distance' },
        { aggregationType: 'Max', field: 'delay' },
      ],
    },
    hand: `SELECT origin, date_trunc('month', "date") AS month, avg(distance), max(delay) FROM flights WHERE delay BETWEEN 60 AND 120 GROUP BY ${FLIGHTS_BY_MONTH}`,
  },
};

/**
 * flights-3m.parquet repeated `millions / 3` times, each copy a year later, written to `file` in record
 * order (the big indexes of scale.bench.js and clickhouse.bench.js).
 */
async function writeFlights(millions, file, tempDirectory) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const q = (s) => `'${s.replace(/'/g, "''")}'`;
  const gen = await DuckDBInstance.create(':memory:', {
    preserve_insertion_order: 'true',
    memory_limit: '2GB',
    temp_directory: tempDirectory,
  });
  const g = await gen.connect();
  await g.run(
    `COPY (SELECT "date" + to_years(CAST(k AS INTEGER)) AS "date", delay, distance, origin, destination FROM range(${millions / 3}) r(k), read_parquet(${q(path.join(VEGA, 'flights-3m.parquet'))}) ORDER BY k) TO ${q(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)`,
  );
  g.closeSync();
  gen.closeSync();
}

/** The hand-written side's load: CREATE TABLE flights AS the Parquet file, into DuckDB file `dbFile`. */
async function writeDuckDbFlights(dbFile, file) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const db = await DuckDBInstance.create(dbFile, { threads: '2' });
  const c = await db.connect();
  await c.run(`CREATE TABLE flights AS SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`);
  await c.run('CHECKPOINT');
  c.closeSync();
  db.closeSync();
}

module.exports = {
  postOverHttp,
  EVERYDAY_SEARCHES,
  PIE_PNG_CALL,
  freePort,
  writeFlights,
  writeDuckDbFlights,
  ROOT,

  BIN,
  VEGA,
  cli,
  benchToken,
  benchData,
  startServer,
  startOtlpSink,
  rpc,
  rpcOverHttp,
  callOverHttp,
  cpuMsOf,
  timeIt,
  timePair,
  timeTurns,
  flightsCrosstabBench,
  fmt,
  clientLoops,
  processTree,
  PIE,
  FLIGHTS_BY_MONTH,
  FLIGHTS_CROSSTABS,
};

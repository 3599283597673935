// Helpers shared by the bench scripts: run the built CLI, start the server, time things.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'apps', 'quarry', 'bin', 'quarry.js');
const VEGA = path.join(ROOT, 'node_modules', 'vega-datasets', 'data');

function cli(argv, env) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [BIN, ...argv], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv.join(' ')} exited ${code}: ${err}`))));
  });
}

/** `quarry serve` of this checkout, or of the build whose bin is `bin` (another checkout, to compare). */
function startServer(env, bin = BIN) {
  const child = spawn(process.execPath, [bin, 'serve'], {
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
        child.stdout.resume();
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
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  return new Promise((resolve, reject) => {
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
        res.on('end', () => {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if (parsed.error) reject(new Error(`${method}: ${JSON.stringify(parsed.error)}`));
          else resolve(parsed.result.data);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

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

module.exports = {
  ROOT,
  BIN,
  VEGA,
  cli,
  startServer,
  startOtlpSink,
  rpc,
  rpcOverHttp,
  cpuMsOf,
  timeIt,
  timePair,
  timeTurns,
  fmt,
};

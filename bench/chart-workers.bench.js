#!/usr/bin/env node
// Chart throughput against the number of chart-worker processes (1, 2, 4) on one queue: the figure the
// chart worker's queue-depth autoscaler (k8s/base/chart-worker.yaml) is sized from. Each step starts its
// workers (CHART_WORKER_CONCURRENCY=2, Chromium warm), warms them, then 8 clients (8 users) request 800x600 PNGs
// through the whole JSON-RPC path for --seconds; charts/s, p50/p95 latency, and the deepest wait list
// seen (BullMQ's `wait`, sampled every 100 ms: what quarry_chart_queue_jobs{state="waiting"} exports).
// Usage: npm run build && node bench/chart-workers.bench.js [--seconds 10] [--workers 1,2,4]
const { spawn, execFileSync } = require('node:child_process');
const os = require('node:os');
const { VEGA, BIN, benchData, cli, rpc, freePort } = require('./lib');
const path = require('node:path');

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const SECONDS = Number(arg('--seconds', '10'));
const STEPS = arg('--workers', '1,2,4').split(',').map(Number);
const CLIENTS = 8;
const PARAMS = {
  index: 'movies',
  rows: ['Major Genre'],
  columns: [{ field: 'MPAA Rating' }],
  totals: [{ aggregationType: 'Count' }],
  chartType: 'MSColumn2D',
  width: 800,
  height: 600,
};

const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function serve(env, ready) {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    const on = (d) => {
      buf += d;
      const m = ready.exec(buf);
      if (m) {
        child.stdout.off('data', on);
        child.stdout.resume();
        resolve({ child, match: m });
      }
    };
    child.stdout.on('data', on);
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${buf.slice(-1500)}`)));
  });
}

const stop = (child) =>
  new Promise((r) => {
    children.delete(child);
    child.once('exit', r);
    child.kill('SIGTERM');
  });

async function main() {
  const { env } = await benchData('cw', [['movies', path.join(VEGA, 'movies.json')]]);
  // One user per client: the chart service admits QUARRY_HEAVY_PER_CALLER (1) render per caller at a
  // time, so a single token would measure that limit, not the workers.
  const tokens = [];
  for (let i = 0; i < CLIENTS; i++) {
    await cli(['user', 'create', `client${i}`, '--indexes', '*'], env);
    const out = await cli(['token', 'create', '--user', `client${i}`, '--scopes', 'query:execute'], env);
    tokens.push(out.trim().split('\n').pop());
  }
  const redisPort = await freePort();
  const redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  children.add(redis);
  await new Promise((r) => setTimeout(r, 300));
  const shared = { ...env, REDIS_URL: `redis://127.0.0.1:${redisPort}` };
  const main = await serve(
    { ...shared, PORT: '0', HOST: '127.0.0.1', QUARRY_TARGET: 'gateway,query,crosstab,chart,reports' },
    /"port":(\d+),"msg":"quarry ready"/,
  );
  const port = Number(main.match[1]);
  const waitLen = () =>
    Number(
      execFileSync('redis-cli', ['-p', String(redisPort), 'LLEN', 'bull:quarry-charts:wait'], { encoding: 'utf8' }),
    );

  console.log(`chart workers: ${os.cpus().length} cores, ${CLIENTS} clients, ${SECONDS} s per step, 800x600 PNG`);
  console.log('| workers | charts/s | p50 ms | p95 ms | deepest wait list |');
  console.log('| ------: | -------: | -----: | -----: | ----------------: |');
  for (const n of STEPS) {
    const workers = await Promise.all(
      Array.from({ length: n }, () =>
        serve(
          { ...shared, QUARRY_TARGET: 'chart-worker', CHART_WORKER_CONCURRENCY: '2', QUARRY_CHROMIUM_IDLE_S: '0' },
          /"msg":"chart worker ready"/,
        ),
      ),
    );
    // Every worker's pages warm (the queue hands jobs to whichever asks first).
    await Promise.all(tokens.map((token) => rpc(port, token, 'CROSSTAB.EXECUTE', PARAMS)));
    let deepest = 0;
    const sampler = setInterval(() => {
      try {
        deepest = Math.max(deepest, waitLen());
      } catch {
        // redis-cli missing: the column says so.
        deepest = NaN;
      }
    }, 100);
    const ms = [];
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      tokens.map(async (token) => {
        while (Date.now() < end) {
          const t = process.hrtime.bigint();
          await rpc(port, token, 'CROSSTAB.EXECUTE', PARAMS);
          ms.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      }),
    );
    clearInterval(sampler);
    ms.sort((a, b) => a - b);
    const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(0);
    console.log(`| ${n} | ${(ms.length / SECONDS).toFixed(1)} | ${q(0.5)} | ${q(0.95)} | ${deepest} |`);
    await Promise.all(workers.map((w) => stop(w.child)));
  }
  await stop(main.child);
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

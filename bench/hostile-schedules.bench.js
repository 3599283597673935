#!/usr/bin/env node
// Checking a schedule's cron must not hold the gateway: `REPORTS.SCHEDULE` with `*/5 * L * *` in
// Europe/Paris used to walk up to 200 runs on the gateway's thread (about 2 s per call). Measured in one
// run, on one server: /healthz latency (one probe every 10 ms) and another user's search, first idle,
// then while 20 such schedules are made at once; and how long each of those REPORTS.SCHEDULE calls took.
// Target: /healthz p99 under 50 ms while the 20 hostile schedules are made.
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/hostile-schedules.bench.js
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { VEGA, cli, startServer, rpc, fmt } = require('./lib');

const HOSTILE = 20;

function quantiles(ms) {
  const sorted = [...ms].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { n: sorted.length, p50: q(0.5), p99: q(0.99), max: sorted[sorted.length - 1] };
}

/** Probes /healthz every 10 ms until `stop()`; resolves with every probe's latency. */
function probeHealth(port) {
  const ms = [];
  let running = true;
  const once = () =>
    new Promise((resolve) => {
      const t = process.hrtime.bigint();
      http
        .get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
          res.resume();
          res.on('end', () => {
            ms.push(Number(process.hrtime.bigint() - t) / 1e6);
            resolve();
          });
        })
        .on('error', resolve);
    });
  const loop = (async () => {
    while (running) {
      await once();
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return ms;
    },
  };
}

async function tokenOf(env, name) {
  await cli(['user', 'create', name, '--indexes', '*'], env);
  return (await cli(['token', 'create', '--user', name, '--scopes', 'query:execute,reports:read,reports:write'], env))
    .trim()
    .split('\n')
    .pop();
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-hs-'));
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const env = {
    QUARRY_DATA_DIR: dataDir,
    QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${receiver.address().port}`,
  };
  await cli(['index', 'load', 'movies', path.join(VEGA, 'movies.json')], env);
  const attacker = await tokenOf(env, 'attacker');
  const bystander = await tokenOf(env, 'bystander');
  const server = await startServer(env);
  try {
    const saved = await rpc(server.port, attacker, 'QUERIES.EXECUTE', {
      index: 'movies',
      query: '*',
      saveReport: { name: 'all films' },
    });
    const guid = saved.report.guid;
    const search = () =>
      rpc(server.port, bystander, 'QUERIES.EXECUTE', { index: 'movies', query: 'Drama', pageSize: 5 });
    const timeSearches = async (n) => {
      const ms = [];
      for (let i = 0; i < n; i++) {
        const t = process.hrtime.bigint();
        await search();
        ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return ms;
    };

    // Idle: 2 s of probes and 20 searches.
    let probe = probeHealth(server.port);
    const idleSearch = await timeSearches(20);
    await new Promise((r) => setTimeout(r, 2000));
    const idleHealth = await probe.stop();

    // Under attack: 20 hostile schedules at once, the probes and the bystander's searches alongside.
    probe = probeHealth(server.port);
    const scheduleMs = [];
    const attack = Promise.all(
      Array.from({ length: HOSTILE }, async () => {
        const t = process.hrtime.bigint();
        await rpc(server.port, attacker, 'REPORTS.SCHEDULE', {
          guid,
          cron: '*/5 * L * *',
          timeZone: 'Europe/Paris',
          format: 'json',
          deliver: { webhook: { url: `http://127.0.0.1:${receiver.address().port}/hook` } },
        });
        scheduleMs.push(Number(process.hrtime.bigint() - t) / 1e6);
      }),
    );
    const busySearch = await timeSearches(20);
    await attack;
    await new Promise((r) => setTimeout(r, 500));
    const busyHealth = await probe.stop();

    const row = (label, q) =>
      `${label.padEnd(34)} n=${String(q.n).padStart(4)}  p50 ${String(fmt(q.p50)).padStart(8)} ms  p99 ${String(fmt(q.p99)).padStart(8)} ms  max ${String(fmt(q.max)).padStart(8)} ms`;
    console.log(`hostile schedules: ${HOSTILE} x REPORTS.SCHEDULE {cron: "*/5 * L * *", timeZone: "Europe/Paris"}`);
    console.log(row('/healthz, idle', quantiles(idleHealth)));
    console.log(row('/healthz, while scheduling', quantiles(busyHealth)));
    console.log(row('bystander search, idle', quantiles(idleSearch)));
    console.log(row('bystander search, while scheduling', quantiles(busySearch)));
    console.log(row('REPORTS.SCHEDULE (each)', quantiles(scheduleMs)));
    const p99 = quantiles(busyHealth).p99;
    console.log(`target: /healthz p99 < 50 ms while scheduling: ${p99 < 50 ? 'met' : 'NOT met'} (${fmt(p99)} ms)`);
  } finally {
    await server.stop();
    receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

#!/usr/bin/env node
// Scheduled deliveries are background work: schedules of a heavy report firing every second (as often as
// QUARRY_SCHEDULE_MIN_INTERVAL_S=1 allows) must not starve interactive calls. Measured side by side in one
// run, on one server, p50/p95 of an interactive search and of an interactive crosstab:
//   idle        nothing else runs;
//   scheduled   5 schedules of the heavy report fire every second (deliveries run one at a time);
//   by hand     the same heavy report run by 5 clients at once, as interactive calls (what the schedules
//               would cost without their background lane).
// The result cache is off, so every delivery computes the report. Target: "scheduled" p95 within 3x of
// "idle", and well below "by hand".
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/schedules.bench.js
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { VEGA, cli, startServer, rpc, timeIt, fmt } = require('./lib');

const CALLS = 60;
const SCHEDULES = 5;

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-s-'));
  let delivered = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const hookPort = receiver.address().port;
  const env = {
    QUARRY_DATA_DIR: dataDir,
    QUARRY_CACHE_MB: '0',
    QUARRY_SCHEDULE_MIN_INTERVAL_S: '1',
    QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${hookPort}`,
  };
  await cli(['index', 'load', 'flights', path.join(VEGA, 'flights-200k.json')], env);
  await cli(['user', 'create', 'bench', '--indexes', '*'], env);
  const token = (
    await cli(['token', 'create', '--user', 'bench', '--scopes', 'query:execute,reports:read,reports:write'], env)
  )
    .trim()
    .split('\n')
    .pop();
  const server = await startServer(env);
  const call = (method, params) => rpc(server.port, token, method, params);
  try {
    const heavy = {
      index: 'flights',
      rows: [{ field: 'distance', bin: { width: 10 } }],
      columns: [{ field: 'time', bin: { width: 1 } }],
      totals: [
        { aggregationType: 'Median', field: 'delay' },
        { aggregationType: 'StdDev', field: 'delay' },
      ],
      format: 'json',
    };
    const saved = await call('CROSSTAB.EXECUTE', { ...heavy, saveReport: { name: 'heavy' } });
    const guid = saved.report.guid;
    const t0 = process.hrtime.bigint();
    await call('REPORTS.EXECUTE', { guid });
    const heavyMs = Number(process.hrtime.bigint() - t0) / 1e6;

    const search = () =>
      call('QUERIES.EXECUTE', { index: 'flights', query: 'delay:>300 AND distance:<500', pageSize: 20 });
    const pivot = () =>
      call('CROSSTAB.EXECUTE', {
        index: 'flights',
        query: 'distance:<300',
        rows: [{ field: 'time', bin: { width: 1 } }],
        columns: [],
        totals: [{ aggregationType: 'Count' }],
      });
    const measure = async () => ({ search: await timeIt(CALLS, search), crosstab: await timeIt(CALLS / 2, pivot) });

    const idle = await measure();

    const ids = [];
    for (let i = 0; i < SCHEDULES; i++) {
      const s = await call('REPORTS.SCHEDULE', {
        guid,
        cron: '* * * * * *',
        format: 'json',
        deliver: { webhook: { url: `http://127.0.0.1:${hookPort}/s${i}` } },
      });
      ids.push(s.scheduleId);
    }
    await new Promise((r) => setTimeout(r, 3000));
    const before = delivered;
    const started = Date.now();
    const scheduled = await measure();
    const deliveriesPerS = (delivered - before) / ((Date.now() - started) / 1000);
    for (const scheduleId of ids) await call('REPORTS.UNSCHEDULE', { scheduleId });
    await new Promise((r) => setTimeout(r, 2000));

    let stop = false;
    const loops = Array.from({ length: SCHEDULES }, async () => {
      while (!stop) await call('REPORTS.EXECUTE', { guid });
    });
    await new Promise((r) => setTimeout(r, 1000));
    const byHand = await measure();
    stop = true;
    await Promise.all(loops);

    const row = (name, m) =>
      console.log(
        `${name.padEnd(10)} search p50 ${fmt(m.search.p50)} ms, p95 ${fmt(m.search.p95)} ms | crosstab p50 ${fmt(m.crosstab.p50)} ms, p95 ${fmt(m.crosstab.p95)} ms`,
      );
    console.log(`heavy report: ${fmt(heavyMs)} ms per run; ${SCHEDULES} schedules firing every second`);
    row('idle', idle);
    row('scheduled', scheduled);
    row('by hand', byHand);
    console.log(`deliveries while scheduled: ${fmt(deliveriesPerS)}/s (one at a time)`);
    const ratio = scheduled.search.p95 / idle.search.p95;
    console.log(
      `search p95 scheduled/idle: ${fmt(ratio)}x (target < 3x); by hand/idle: ${fmt(byHand.search.p95 / idle.search.p95)}x`,
    );
  } finally {
    await server.stop();
    receiver.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

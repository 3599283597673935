#!/usr/bin/env node
// Export fairness: another user's searches while a 3M-row export runs, beside the same searches with no
// export, in one run. User A exports every record of flights-3m.parquet sorted by delay (CSV, EXPORTS.START
// to done); user B meanwhile searches back to back, one search at a time: a page of the same 3M-row index
// (filtered and sorted) and a page of movies. The same loop of B's searches with nothing else running is
// the baseline; they alternate, round by round, so neither always runs on a warmer machine. Each round runs
// one export, then two of user A's started at once (the second waits for no slot: two of a user's may run).
// Target: B's p99 while the export runs <= 50 ms.
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/export-fairness.bench.js [--rounds 3]
const fs = require('node:fs');
const path = require('node:path');
const { VEGA, cli, startServer, rpc, benchData, fmt } = require('./lib');

const at = process.argv.indexOf('--rounds');
const ROUNDS = at > 0 ? Number(process.argv[at + 1]) : 3;
const FLIGHTS = path.join(VEGA, 'flights-3m.parquet');
const ROWS = 3_000_000;

const SEARCHES = [
  { index: 'flights', query: 'origin:SFO AND delay:>30', sort: [{ field: 'delay', direction: 'desc' }], pageSize: 20 },
  { index: 'movies', query: 'Director:Spielberg', sort: [{ field: 'Title' }], pageSize: 20 },
];

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const q = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

/** B's searches back to back until `until()` says stop; each one's milliseconds. */
async function searchLoop(port, token, until) {
  const ms = [];
  for (let i = 0; !until(); i++) {
    const t = process.hrtime.bigint();
    await rpc(port, token, 'QUERIES.EXECUTE', SEARCHES[i % SEARCHES.length]);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return ms;
}

/** `n` exports of user A started at once, B searching until every one is done. */
async function exportWhileSearching(port, exporter, searcher, n) {
  const t = process.hrtime.bigint();
  const ids = [];
  for (let i = 0; i < n; i++) {
    const { exportId } = await rpc(port, exporter, 'EXPORTS.START', {
      method: 'QUERIES.EXECUTE',
      params: { index: 'flights', query: '*', sort: [{ field: 'delay', direction: 'asc' }] },
      format: 'csv',
    });
    ids.push(exportId);
  }
  const statuses = ids.map(() => ({ state: 'queued' }));
  const settled = () => statuses.every((s) => s.state === 'done' || s.state === 'failed');
  const following = (async () => {
    while (!settled()) {
      await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < ids.length; i++)
        statuses[i] = await rpc(port, exporter, 'EXPORTS.STATUS', { exportId: ids[i] });
    }
  })();
  const ms = await searchLoop(port, searcher, settled);
  await following;
  for (const s of statuses)
    if (s.state !== 'done' || s.rowsWritten !== ROWS) throw new Error(`export: ${JSON.stringify(s)}`);
  return { ms, secs: Number(process.hrtime.bigint() - t) / 1e9 };
}

async function main() {
  const { dataDir, env, token } = await benchData(
    'export-fairness',
    [
      ['flights', FLIGHTS],
      ['movies', path.join(VEGA, 'movies.json')],
    ],
    'query:execute',
  );
  await cli(['user', 'create', 'searcher', '--indexes', '*'], env);
  const searcher = (await cli(['token', 'create', '--user', 'searcher', '--scopes', 'query:execute'], env))
    .trim()
    .split('\n')
    .pop();
  const server = await startServer({ ...env, QUARRY_EXPORT_MAX_ROWS: String(ROWS) });
  try {
    // Warm: one export unmeasured (the first search of a version opens its snapshot).
    await exportWhileSearching(server.port, token, searcher, 1);
    const idle = [];
    const busy = { 1: [], 2: [] };
    const secs = { 1: [], 2: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of [1, 2]) {
        const run = await exportWhileSearching(server.port, token, searcher, n);
        busy[n].push(...run.ms);
        secs[n].push(run.secs);
        // The baseline for as long as the exports took.
        const end = Date.now() + run.secs * 1000;
        idle.push(...(await searchLoop(server.port, searcher, () => Date.now() >= end)));
      }
    }
    const row = (name, xs) =>
      `${name.padEnd(40)} ${String(xs.length).padStart(6)} searches  p50 ${String(fmt(q(xs, 0.5))).padStart(7)} ms  p99 ${String(fmt(q(xs, 0.99))).padStart(7)} ms  max ${String(fmt(q(xs, 1))).padStart(7)} ms`;
    console.log(row('no export', idle));
    console.log(row('while one 3M-row export runs', busy[1]));
    console.log(row("while two (one user's, at once) run", busy[2]));
    for (const n of [1, 2])
      console.log(
        `${n} export${n > 1 ? 's' : ''}: p50 ${fmt(q(busy[n], 0.5) / q(idle, 0.5))}x, p99 ${fmt(q(busy[n], 0.99) / q(idle, 0.99))}x ` +
          `the idle figures (target: p99 <= 50 ms); took ${secs[n].map((x) => fmt(x)).join(', ')} s`,
      );
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

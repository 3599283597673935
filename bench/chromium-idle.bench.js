#!/usr/bin/env node
// Chromium on demand (issue #30 item 4): the resident memory of an idle all-in-one process, with
// Chromium kept warm from start-up (QUARRY_CHROMIUM_IDLE_S=0, what every process did before) beside
// Chromium started by the first chart and closed after QUARRY_CHROMIUM_IDLE_S without one, in one run.
// RSS from ps, summed over the process and its descendants (redis-server, Chromium), and PSS from
// /proc/<pid>/smaps_rollup (shared pages split between Chromium's processes).
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/chromium-idle.bench.js
const path = require('node:path');
const { VEGA, benchData, startServer, rpc, fmt, processTree, PIE } = require('./lib');

const IDLE_S = 3;
/** MB of the process tree: RSS summed, PSS summed, and how many of its processes are Chromium's. */
function tree(pid) {
  const procs = processTree(pid);
  const mb = (k) => procs.reduce((sum, p) => sum + p[k], 0) / 1024;
  return { rssMb: mb('rssKb'), pssMb: mb('pssKb'), chromium: procs.filter((p) => /chrom/i.test(p.comm)).length };
}

const settle = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const { env, token } = await benchData('idle', [['movies', path.join(VEGA, 'movies.json')]]);
  const rows = [];

  const warm = await startServer({ ...env, QUARRY_CHROMIUM_IDLE_S: '0' });
  await settle(3000);
  rows.push({ state: 'before: warm from start-up, idle', ...tree(warm.child.pid) });
  await rpc(warm.port, token, 'CROSSTAB.EXECUTE', PIE);
  await settle(IDLE_S * 1000 + 2000);
  rows.push({ state: `before: ${IDLE_S + 2} s after a chart`, ...tree(warm.child.pid) });
  await warm.stop();

  const lazy = await startServer({ ...env, QUARRY_CHROMIUM_IDLE_S: String(IDLE_S) });
  await settle(3000);
  rows.push({ state: 'after: started, no chart yet', ...tree(lazy.child.pid) });
  const t = Date.now();
  await rpc(lazy.port, token, 'CROSSTAB.EXECUTE', PIE);
  const firstMs = Date.now() - t;
  rows.push({ state: 'after: right after the first chart', ...tree(lazy.child.pid) });
  const t2 = Date.now();
  await rpc(lazy.port, token, 'CROSSTAB.EXECUTE', PIE);
  const warmMs = Date.now() - t2;
  await settle(IDLE_S * 1000 + 2000);
  rows.push({ state: `after: ${IDLE_S + 2} s after a chart (idle ${IDLE_S} s)`, ...tree(lazy.child.pid) });
  await lazy.stop();

  console.table(
    rows.map((r) => ({
      state: r.state,
      'RSS MB (tree)': fmt(r.rssMb),
      'PSS MB (tree)': fmt(r.pssMb),
      'Chromium processes': r.chromium,
    })),
  );
  const saved = rows[0].pssMb - rows[2].pssMb;
  console.log(
    `idle process, PSS: ${fmt(rows[0].pssMb)} MB warm vs ${fmt(rows[2].pssMb)} MB on demand (${fmt(saved)} MB less, ratio ${fmt(rows[2].pssMb / rows[0].pssMb)}); RSS ${fmt(rows[0].rssMb)} vs ${fmt(rows[2].rssMb)} MB`,
  );
  console.log(`first chart with Chromium started on demand: ${firstMs} ms; the next one: ${warmMs} ms`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

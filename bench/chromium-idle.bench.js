#!/usr/bin/env node
// Chromium on demand (issue #30 item 4): the resident memory of an idle all-in-one process, with
// Chromium kept warm from start-up (QUARRY_CHROMIUM_IDLE_S=0, what every process did before) beside
// Chromium started by the first chart and closed after QUARRY_CHROMIUM_IDLE_S without one, in one run.
// RSS from ps, summed over the process and its descendants (redis-server, Chromium), and PSS from
// /proc/<pid>/smaps_rollup (shared pages split between Chromium's processes).
// Usage: npm run build && flock /tmp/quarry-heavy.lock node bench/chromium-idle.bench.js
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { VEGA, cli, startServer, rpc, fmt } = require('./lib');

const IDLE_S = 3;
const PIE = {
  index: 'movies',
  query: '*',
  rows: ['MPAA Rating'],
  totals: [{ aggregationType: 'Count' }],
  chartType: 'Pie2D',
  width: 400,
  height: 300,
};

function pssKb(pid) {
  try {
    const m = /Pss:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** MB of the process tree: RSS summed, PSS summed, and how many of its processes are Chromium's. */
function tree(pid) {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,comm='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
  const kids = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [p, pp] of table)
      if (kids.has(Number(pp)) && !kids.has(Number(p))) {
        kids.add(Number(p));
        grew = true;
      }
  }
  let rss = 0;
  let pss = 0;
  let chromium = 0;
  for (const [p, , kb, comm] of table)
    if (kids.has(Number(p))) {
      rss += Number(kb);
      pss += pssKb(Number(p));
      if (/chrom/i.test(comm)) chromium++;
    }
  return { rssMb: rss / 1024, pssMb: pss / 1024, chromium };
}

const settle = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-idle-'));
  const env = { QUARRY_DATA_DIR: dataDir };
  await cli(['index', 'load', 'movies', path.join(VEGA, 'movies.json')], env);
  await cli(['user', 'create', 'bench', '--indexes', '*'], env);
  const token = (await cli(['token', 'create', '--user', 'bench', '--scopes', 'query:execute'], env))
    .trim()
    .split('\n')
    .pop();
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

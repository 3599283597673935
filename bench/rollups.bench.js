#!/usr/bin/env node
// Rollups: flights-3m.parquet (and copies of it at 30M rows with --sizes 3,30, the dates shifted a year
// per copy as bench/scale.bench.js makes them), each size in one run:
// - load: `quarry index load` without a rollup and with one (origin x month: Count, Sum(delay), distinct
//   destinations), each into its own data directory, beside DuckDB's own CREATE TABLE AS from the
//   Parquet file into a fresh file, in turns (--load-runs of each, medians): one load of each on a
//   shared machine moved by more than the rollup costs;
// - the covered crosstab (origin x month, the three totals, subtotals) through CROSSTAB.EXECUTE with
//   cache: false, answered from the rollup (meta.servedBy checked), the first call after a start and the
//   p50 of it and the --runs following ones, beside the same crosstab by hand on DuckDB over its own
//   table (one GROUPING SETS query, first call after reopening the file, then the p50 the same way), and
//   beside Quarry's scan (the rollup dropped).
// - with --before <other checkout>/apps/quarry/bin/quarry.js, that build's plain load too, in the same
//   turns (its own data directory, removed once timed).
// Heavy: run under `flock /tmp/quarry-heavy.lock`.
// Usage: npm run build && node bench/rollups.bench.js [--sizes 3,30] [--runs 9] [--load-runs 5] [--before <bin>]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');
const { VEGA, cli, writeFlights, benchToken, startServer, fmt, FLIGHTS_CROSSTABS, FLIGHTS_BY_MONTH } = require('./lib');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const SIZES = arg('--sizes', '3').split(',').map(Number);
const RUNS = Number(arg('--runs', '9'));
const LOAD_RUNS = Number(arg('--load-runs', '5'));
const BEFORE = arg('--before', undefined);
const SOURCE = path.join(VEGA, 'flights-3m.parquet');
const q = (s) => `'${s.replace(/'/g, "''")}'`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const PARAMS = { ...FLIGHTS_CROSSTABS.measures.params, subtotals: true, cache: false };
const HAND = FLIGHTS_CROSSTABS.measures.hand.replace(/GROUP BY .*$/, `GROUP BY ${FLIGHTS_BY_MONTH}`);
// Past 62M rows (145 months of 229 origins and 3 totals) origin x month passes the crosstab's
// 100,000-cell limit: there the crosstab groups by year (the month rollup still covers it).
const BY_YEAR = {
  params: { ...PARAMS, columns: [{ field: 'date', dateGroup: 'year' }] },
  hand: HAND.replace(`date_trunc('month', "date") AS month`, `date_trunc('year', "date") AS month`),
};
const shape = (millions) => (millions > 62 ? BY_YEAR : { params: PARAMS, hand: HAND });

async function call(port, token, params) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'CROSSTAB.EXECUTE',
      params: { index: 'flights', ...params },
    }),
  });
  const body = await res.json();
  if (body.error) throw new Error(JSON.stringify(body.error));
  return body.result.meta;
}

/** First call after a fresh start, then the p50 of RUNS more; checks who answered. */
async function served(env, token, expectServedBy, params) {
  const server = await startServer(env);
  try {
    const t = performance.now();
    const meta = await call(server.port, token, params);
    const first = performance.now() - t;
    if ((meta.servedBy ?? null) !== expectServedBy)
      throw new Error(`servedBy ${meta.servedBy} (expected ${expectServedBy})`);
    const ms = [];
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now();
      await call(server.port, token, params);
      ms.push(performance.now() - s);
    }
    // The p50 counts the first call too (the target is "first call after a start included").
    return { first, p50: median([first, ...ms]) };
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
  }
}

async function byHand(dbFile, hand) {
  const t = performance.now();
  const db = await DuckDBInstance.create(dbFile, { access_mode: 'READ_ONLY', threads: '2' });
  const c = await db.connect();
  await c.runAndReadAll(hand);
  const first = performance.now() - t;
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await c.runAndReadAll(hand);
    ms.push(performance.now() - s);
  }
  c.closeSync();
  db.closeSync();
  return { first, p50: median([first, ...ms]) };
}

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function runSize(millions, work) {
  let file = SOURCE;
  if (millions !== 3) {
    file = path.join(work, `flights-${millions}m.parquet`);
    await writeFlights(millions, file, path.join(work, 'gen-tmp'));
  }
  const env = { QUARRY_DATA_DIR: path.join(work, `data-${millions}`) };
  const load = ['index', 'load', 'flights', file, '--type', 'date=date:month', '--view', 'Destinations=destination'];
  const dbFile = path.join(work, `hand-${millions}.duckdb`);
  const handLoadOnce = () =>
    timed(async () => {
      fs.rmSync(dbFile, { force: true });
      fs.rmSync(`${dbFile}.wal`, { force: true });
      const db = await DuckDBInstance.create(dbFile);
      const c = await db.connect();
      await c.run(`CREATE TABLE flights AS SELECT * FROM read_parquet(${q(file)})`);
      c.closeSync();
      db.closeSync();
    });
  // The index the crosstabs read: loaded once, then given the rollup (`rollup add` publishes the same
  // records again with it). Its first load is not timed: the first load of a run was seen disturbed.
  await cli(load, env);
  const addMs = await timed(() =>
    cli(
      [
        'index',
        'rollup',
        'add',
        'flights',
        '--rows',
        'origin',
        '--columns',
        'date:month',
        '--totals',
        'count,sum:delay,countDistinct:destination',
        '--name',
        'om',
      ],
      env,
    ),
  );
  // Then in turns: DuckDB's CREATE TABLE, the other build's load (its own data directory), this build's
  // load into a directory whose index has no rollup, and into this one.
  const plainEnv = { QUARRY_DATA_DIR: path.join(work, `data-plain-${millions}`) };
  const beforeEnv = { QUARRY_DATA_DIR: path.join(work, `data-before-${millions}`) };
  const runs = { hand: [], before: [], plain: [], rollup: [] };
  for (let i = 0; i < LOAD_RUNS; i++) {
    runs.hand.push(await handLoadOnce());
    if (BEFORE) runs.before.push(await timed(() => cli(load, beforeEnv, BEFORE)));
    runs.plain.push(await timed(() => cli(load, plainEnv)));
    runs.rollup.push(await timed(() => cli(load, env)));
  }
  for (const e of [plainEnv, beforeEnv]) fs.rmSync(e.QUARRY_DATA_DIR, { recursive: true, force: true });
  const handLoad = median(runs.hand);
  const beforeLoad = BEFORE ? median(runs.before) : undefined;
  const plainLoad = median(runs.plain);
  const rollupLoad = median(runs.rollup);
  const token = await benchToken(env);
  const { params, hand: handSql } = shape(millions);
  const fromRollup = await served(env, token, 'om', params);
  const hand = await byHand(dbFile, handSql);
  await cli(['index', 'rollup', 'drop', 'flights', 'om'], env);
  const scan = await served(env, token, null, params);
  return {
    load: {
      rows: `${millions}M`,
      'DuckDB CREATE TABLE ms': fmt(handLoad),
      ...(BEFORE ? { 'before: load ms': fmt(beforeLoad), 'before: ratio': fmt(beforeLoad / handLoad) } : {}),
      'quarry index load ms': fmt(plainLoad),
      'ratio (target <= 2)': fmt(plainLoad / handLoad),
      'load with the rollup ms': fmt(rollupLoad),
      'rollup adds': `${fmt(((rollupLoad - plainLoad) / plainLoad) * 100)} %`,
      'rollup add (CLI) ms': fmt(addMs),
    },
    loads: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.map(Math.round)])),
    crosstab: {
      rows: `${millions}M${millions > 62 ? ' (by year)' : ''}`,
      'DuckDB by hand first ms': fmt(hand.first),
      'DuckDB by hand p50 ms': fmt(hand.p50),
      'rollup first ms': fmt(fromRollup.first),
      'rollup p50 ms': fmt(fromRollup.p50),
      'p50 ratio (target <= 0.1)': fmt(fromRollup.p50 / hand.p50),
      'first ratio': fmt(fromRollup.first / hand.first),
      'scan first ms': fmt(scan.first),
      'scan p50 ms': fmt(scan.p50),
    },
  };
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-rollups-'));
  try {
    const loads = [];
    const crosstabs = [];
    for (const m of SIZES) {
      const r = await runSize(m, work);
      loads.push(r.load);
      crosstabs.push(r.crosstab);
      // Each size as it ends: a long run that fails later keeps what it measured.
      console.error(JSON.stringify(r));
      // The next size's files need the room.
      for (const f of fs.readdirSync(work))
        if (new RegExp(`-${m}m?(\\.|$)`).test(f)) fs.rmSync(path.join(work, f), { recursive: true, force: true });
    }
    console.table(loads);
    console.table(crosstabs);
    console.log(`crosstab: ${HAND}`);
    if (SIZES.some((m) => m > 62)) console.log(`by year: ${BY_YEAR.hand}`);
    console.log(
      `loads: median of ${LOAD_RUNS} of each, in turns; ${RUNS} calls after the first; cores: ${os.cpus().length}; node ${process.version}`,
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

#!/usr/bin/env node
// Scale benchmark (issue #30 item 5): flights-3m.parquet copied to 3M and 30M rows (120M with --huge),
// the dates shifted a year per copy. For each size: load time, the first crosstab after a start, idle,
// settled and peak memory of the server process, three crosstabs, two searches and 8-client throughput,
// each beside hand-written DuckDB over the same rows in the same run. The hand-written side is what a
// DuckDB user would do: CREATE TABLE AS into a DuckDB file, reopened read-only, SQL typed by hand.
// Heavy: run under `flock /tmp/quarry-heavy.lock`.
// Usage: npm run build && node bench/scale.bench.js [--sizes 3,30] [--huge] [--runs 5] [--seconds 8]
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { DuckDBInstance } = require('@duckdb/node-api');
const {
  VEGA,
  cli,
  startServer,
  rpc,
  rpcOverHttp,
  callOverHttp,
  timePair,
  fmt,
  clientLoops,
  FLIGHTS_BY_MONTH: BY_MONTH,
  FLIGHTS_CROSSTABS,
  writeFlights,
  writeDuckDbFlights,
} = require('./lib');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const SIZES = [...arg('--sizes', '3,30').split(',').map(Number), ...(process.argv.includes('--huge') ? [120] : [])];
const RUNS = Number(arg('--runs', '5'));
const SECONDS = Number(arg('--seconds', '8'));
const SOURCE = path.join(VEGA, 'flights-3m.parquet');
const q = (s) => `'${s.replace(/'/g, "''")}'`;

const CROSSTABS = [
  {
    name: '(a) origin x month: Count',
    params: { query: '*', rows: ['origin'], columns: [{ field: 'date' }], totals: [{ aggregationType: 'Count' }] },
    hand: `SELECT origin, date_trunc('month', "date") AS month, count(*) FROM flights GROUP BY ${BY_MONTH}`,
  },
  { ...FLIGHTS_CROSSTABS.measures, name: `(b) ${FLIGHTS_CROSSTABS.measures.name}` },
  { ...FLIGHTS_CROSSTABS.delayed, name: `(c) ${FLIGHTS_CROSSTABS.delayed.name}` },
];
const SEARCHES = [
  {
    name: 'origin:SFO, page 1 of 50',
    params: { query: 'origin:SFO', pageSize: 50 },
    hand: [
      `SELECT count(*) AS n FROM flights WHERE origin = 'SFO'`,
      `SELECT * FROM flights WHERE origin = 'SFO' LIMIT 50`,
    ],
  },
  {
    name: 'ORD (a word in any text field), page 1 of 50',
    params: { query: 'ORD', pageSize: 50 },
    hand: [
      `SELECT count(*) AS n FROM flights WHERE origin = 'ORD' OR destination = 'ORD'`,
      `SELECT * FROM flights WHERE origin = 'ORD' OR destination = 'ORD' LIMIT 50`,
    ],
  },
];
/** Over the cell limit whatever the size: refused from the key estimates, before any full pass. */
const REFUSED = {
  query: '*',
  rows: ['origin', 'destination'],
  columns: [{ field: 'date', dateGroup: 'day' }],
  totals: [{ aggregationType: 'Count' }],
};

/** Resident and peak resident memory of a process (MB), from /proc. */
function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** DuckDB's reopen, in a fresh process as a restarted pod would: open the file, run the first crosstab. */
function duckReopen(dbFile, sql) {
  const script = `
    const { DuckDBInstance } = require('@duckdb/node-api');
    (async () => {
      const base = process.memoryUsage().rss;
      const t = performance.now();
      const db = await DuckDBInstance.create(${JSON.stringify(dbFile)}, { access_mode: 'READ_ONLY', threads: '2' });
      const c = await db.connect();
      await c.runAndReadAll(${JSON.stringify(sql)});
      const ms = performance.now() - t;
      const peak = Number(/VmHWM:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
      console.log(JSON.stringify({ ms, grownMb: (process.memoryUsage().rss - base) / 1048576, peakGrownMb: (peak - base) / 1048576 }));
    })();`;
  const out = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').pop());
}

async function readyz(port) {
  for (;;) {
    const status = await new Promise((resolve) =>
      http
        .get(`http://127.0.0.1:${port}/readyz`, (res) => (res.resume(), resolve(res.statusCode)))
        .on('error', () => resolve(0)),
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The p50 of RUNS more calls that must each be refused over the cell limit (the first call, timed by the
 * caller, also plans the estimate's statement on a cold connection).
 */
async function refusalP50(call) {
  const ms = [];
  // Only the estimate says "N cells or more"; a refusal after the pass gives the exact count.
  let fromEstimates = true;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const err = await call().then(
      () => null,
      (e) => e,
    );
    ms.push(performance.now() - t);
    if (!/would have \d+ cells/.test(String(err && err.message))) throw new Error(`expected a refusal, got ${err}`);
    fromEstimates &&= / cells or more /.test(err.message);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length / 2)], how: fromEstimates ? 'from estimates' : 'AFTER ITS PASS' };
}

/** Calls per second of `n` clients calling `fn` in loops for `seconds`. */
async function throughput(n, seconds, fn) {
  return (await clientLoops(n, seconds, (i) => fn(i))) / seconds;
}

async function runSize(millions, work) {
  const rowsOut = [];
  const file = path.join(work, `flights-${millions}m.parquet`);
  await writeFlights(millions, file, path.join(work, 'gen-tmp'));

  const dataDir = path.join(work, `data-${millions}m`);
  const env = { QUARRY_DATA_DIR: dataDir };
  let t = performance.now();
  await cli(['index', 'load', 'flights', file, '--type', 'date=date:month', '--view', 'Destinations=destination'], env);
  const loadS = (performance.now() - t) / 1000;
  // The hand-written side's load: CREATE TABLE AS into its own file.
  const dbFile = path.join(work, `hand-${millions}m.duckdb`);
  t = performance.now();
  await writeDuckDbFlights(dbFile, file);
  const handLoadS = (performance.now() - t) / 1000;
  rowsOut.push({
    size: `${millions}M`,
    what: 'load (s)',
    quarry: fmt(loadS),
    duckdb: fmt(handLoadS),
    ratio: fmt(loadS / handLoadS),
  });

  // One analyst per client: Quarry admits one heavy call at a time per caller by default
  // (QUARRY_HEAVY_PER_CALLER=1, issue #27), so 8 clients of one token would be one client's rate.
  const tokens = [];
  for (let i = 0; i < 8; i++) {
    await cli(['user', 'create', `bench${i}`, '--indexes', '*'], env);
    tokens.push(
      (await cli(['token', 'create', '--user', `bench${i}`, '--scopes', 'query:execute'], env))
        .trim()
        .split('\n')
        .pop(),
    );
  }
  const token = tokens[0];

  // A start: spawn, ready (every published index open), then the first crosstab.
  t = performance.now();
  const server = await startServer({ ...env, QUARRY_CACHE_MB: '0' });
  await readyz(server.port);
  const readyMs = performance.now() - t;
  const idle = memoryOf(server.child.pid);
  // The bench's own first fetch (undici's start, ~90 ms) is not the server's: paid before the clock starts.
  await (await fetch(`http://127.0.0.1:${server.port}/healthz`)).text();
  t = performance.now();
  await rpc(server.port, token, 'CROSSTAB.EXECUTE', { index: 'flights', ...CROSSTABS[0].params });
  const firstMs = performance.now() - t;
  const afterFirst = memoryOf(server.child.pid);
  const reopen = duckReopen(dbFile, CROSSTABS[0].hand);
  rowsOut.push({
    size: `${millions}M`,
    what: `first crosstab (a) after a start, ms (target <= 1.5x DuckDB reopen + 100 = ${fmt(1.5 * reopen.ms + 100)})`,
    quarry: fmt(firstMs),
    duckdb: fmt(reopen.ms),
    ratio: fmt(firstMs / reopen.ms),
    note: `start to ready ${fmt(readyMs)} ms`,
  });
  rowsOut.push({
    size: `${millions}M`,
    what: 'memory grown by the first crosstab, MB (per million rows)',
    quarry: `${fmt(afterFirst.rss - idle.rss)} (${fmt((afterFirst.rss - idle.rss) / millions)})`,
    duckdb: `${fmt(reopen.grownMb)} (${fmt(reopen.grownMb / millions)})`,
    note: `idle RSS ${fmt(idle.rss)} MB`,
  });

  const hand = await DuckDBInstance.create(dbFile, { access_mode: 'READ_ONLY', threads: '2' });
  const hc = await hand.connect();
  const run = async (sql) => (await hc.runAndReadAll(sql)).getRowObjectsJS();
  const overLimit = new Set();
  for (const c of CROSSTABS) {
    const params = { index: 'flights', ...c.params };
    const asked = performance.now();
    const first = await rpc(server.port, token, 'CROSSTAB.EXECUTE', params).catch((err) => err);
    if (first instanceof Error) {
      // As history grows a crosstab passes the cell limit (at 120M: 280 months x 229 origins x 3 totals).
      const cells = /would have (\d+) cells( or more)?/.exec(first.message);
      if (!cells) throw first;
      const refusedMs = performance.now() - asked;
      overLimit.add(c.name);
      const again = await refusalP50(() => rpc(server.port, token, 'CROSSTAB.EXECUTE', params));
      const t0 = performance.now();
      await run(c.hand);
      rowsOut.push({
        size: `${millions}M`,
        what: `${c.name}, p50 ms`,
        quarry: `refused ${cells[2] ? 'from estimates' : 'AFTER ITS PASS'}: ${cells[1]} cells > 100,000, first in ${fmt(refusedMs)} ms, then ${again.how}, p50 ${fmt(again.p50)} ms`,
        duckdb: fmt(performance.now() - t0),
      });
      continue;
    }
    const groups = await run(c.hand);
    const handRows = groups.filter((x) => x.origin !== null && x.month === null).length;
    if (first.rowCount !== handRows) throw new Error(`${c.name}: ${first.rowCount} rows vs hand-written ${handRows}`);
    const { a, b } = await timePair(
      RUNS,
      () => rpc(server.port, token, 'CROSSTAB.EXECUTE', params),
      () => run(c.hand),
    );
    rowsOut.push({
      size: `${millions}M`,
      what: `${c.name}, p50 ms`,
      quarry: fmt(a.p50),
      duckdb: fmt(b.p50),
      ratio: fmt(a.p50 / b.p50),
    });
  }
  for (const s of SEARCHES) {
    const params = { index: 'flights', ...s.params };
    const first = await rpc(server.port, token, 'QUERIES.EXECUTE', params);
    const [count] = await run(s.hand[0]);
    if (Number(count.n) !== first.total) throw new Error(`${s.name}: ${first.total} vs hand-written ${count.n}`);
    const { a, b } = await timePair(
      RUNS * 4,
      () => rpc(server.port, token, 'QUERIES.EXECUTE', params),
      async () => {
        await run(s.hand[0]);
        await run(s.hand[1]);
      },
    );
    rowsOut.push({
      size: `${millions}M`,
      what: `search ${s.name}, p50 ms`,
      quarry: fmt(a.p50),
      duckdb: fmt(b.p50),
      ratio: fmt(a.p50 / b.p50),
    });
  }
  t = performance.now();
  const refused = await rpc(server.port, token, 'CROSSTAB.EXECUTE', { index: 'flights', ...REFUSED }).catch((e) => e);
  const refusedMs = performance.now() - t;
  if (!/would have \d+ cells/.test(String(refused)))
    throw new Error(`expected a refusal, got ${JSON.stringify(refused).slice(0, 200)}`);
  const refusedP50 = await refusalP50(() =>
    rpc(server.port, token, 'CROSSTAB.EXECUTE', { index: 'flights', ...REFUSED }),
  );
  const keysSql = `SELECT count(*) FROM (SELECT DISTINCT origin, destination, CAST("date" AS DATE) FROM flights)`;
  t = performance.now();
  await run(keysSql);
  rowsOut.push({
    size: `${millions}M`,
    what: 'over the cell limit (origin, destination x day): refusal ms, first / p50 (target < 100) vs counting its keys by hand',
    quarry: `${fmt(refusedMs)} / ${fmt(refusedP50.p50)} (${/ cells or more /.test(refused.message) ? 'from estimates' : 'AFTER ITS PASS'}, then ${refusedP50.how})`,
    duckdb: fmt(performance.now() - t),
  });

  // 8 clients: the filtered crosstab (c) and a search in turns, against 8 DuckDB connections doing the same.
  const connections = await Promise.all(Array.from({ length: 8 }, () => hand.connect()));
  if (overLimit.has(CROSSTABS[2].name)) {
    rowsOut.push({
      size: `${millions}M`,
      what: '8 clients (8 analysts), calls/s (crosstab (c) and search 1 in turns)',
      quarry: 'not run: (c) is over the cell limit at this size',
      duckdb: '',
    });
  } else {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const e2eRate = await throughput(8, SECONDS, (i) =>
      i % 2
        ? rpcOverHttp(agent, server.port, tokens[i], 'CROSSTAB.EXECUTE', { index: 'flights', ...CROSSTABS[2].params })
        : rpcOverHttp(agent, server.port, tokens[i], 'QUERIES.EXECUTE', { index: 'flights', ...SEARCHES[0].params }),
    );
    const handRate = await throughput(8, SECONDS, async (i) => {
      const c = connections[i];
      if (i % 2) await c.runAndReadAll(CROSSTABS[2].hand);
      else {
        await c.runAndReadAll(SEARCHES[0].hand[0]);
        await c.runAndReadAll(SEARCHES[0].hand[1]);
      }
    });
    agent.destroy();
    rowsOut.push({
      size: `${millions}M`,
      what: '8 clients (8 analysts), calls/s (crosstab (c) and search 1 in turns)',
      quarry: fmt(e2eRate),
      duckdb: fmt(handRate),
      ratio: fmt(e2eRate / handRate),
    });
  }
  const settled = memoryOf(server.child.pid);
  rowsOut.push({
    size: `${millions}M`,
    what: 'server RSS MB: settled / peak (DuckDB process: peak growth on reopen)',
    quarry: `${fmt(settled.rss)} / ${fmt(settled.peak)}`,
    duckdb: fmt(reopen.peakGrownMb),
  });
  rowsOut.push(await reloadUnderLoad(millions, server.port, token, env, work));
  for (const c of connections) c.closeSync();
  hc.closeSync();
  hand.closeSync();
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(file, { force: true });
  fs.rmSync(dbFile, { force: true });
  return rowsOut;
}

/**
 * Issue #30's fault: a load while 8 clients query the big index. The new version has 1M rows, so
 * every answer's record count says which version answered: no 5xx, each answer one whole version,
 * and once the load has published, never the old one again.
 */
async function reloadUnderLoad(millions, port, token, env, work) {
  const oldCount = millions * 1_000_000;
  // The new version: the first million rows of the source, a count no size has.
  const NEW_COUNT = 1_000_000;
  const next = path.join(work, 'flights-next.parquet');
  {
    const gen = await DuckDBInstance.create(':memory:');
    const g = await gen.connect();
    await g.run(`COPY (SELECT * FROM read_parquet(${q(SOURCE)}) LIMIT ${NEW_COUNT}) TO ${q(next)} (FORMAT parquet)`);
    g.closeSync();
    gen.closeSync();
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const seen = { old: 0, new: 0, other: 0, errors: 0, fiveXx: 0, staleAfterPublish: 0 };
  const problems = [];
  let published = false;
  let stop = false;
  const clients = Array.from({ length: 8 }, async (_, i) => {
    while (!stop) {
      const afterPublish = published;
      const params =
        i % 2
          ? {
              index: 'flights',
              query: '*',
              rows: ['origin'],
              totals: [{ aggregationType: 'Count' }],
              format: 'json',
              cache: false,
            }
          : { index: 'flights', query: '*', pageSize: 1, cache: false };
      const { status, parsed } = await callOverHttp(
        agent,
        port,
        token,
        i % 2 ? 'CROSSTAB.EXECUTE' : 'QUERIES.EXECUTE',
        params,
      );
      if (status >= 500) seen.fiveXx++;
      if (parsed.error || status !== 200) {
        seen.errors++;
        if (problems.length < 3) problems.push(`${status} ${JSON.stringify(parsed.error ?? parsed).slice(0, 160)}`);
        continue;
      }
      const data = parsed.result.data;
      const count = i % 2 ? Number(data.data.grandTotal[0]) : data.total;
      if (count === oldCount) {
        seen.old++;
        if (afterPublish) seen.staleAfterPublish++;
      } else if (count === NEW_COUNT) seen.new++;
      else seen.other++;
    }
  });
  await new Promise((r) => setTimeout(r, 1000));
  const t = performance.now();
  await cli(['index', 'load', 'flights', next, '--type', 'date=date:month', '--view', 'Destinations=destination'], env);
  fs.rmSync(next, { force: true });
  const loadS = (performance.now() - t) / 1000;
  published = true;
  await new Promise((r) => setTimeout(r, 2000));
  stop = true;
  await Promise.all(clients);
  agent.destroy();
  if (problems.length) console.log('reload problems:', problems);
  const ok = seen.fiveXx === 0 && seen.errors === 0 && seen.other === 0 && seen.staleAfterPublish === 0;
  return {
    size: `${millions}M`,
    what: 'reload to 1M rows while 8 clients query: answers old / new, 5xx, errors, mixed, stale after publish',
    quarry: `${seen.old} / ${seen.new}, ${seen.fiveXx}, ${seen.errors}, ${seen.other}, ${seen.staleAfterPublish}`,
    duckdb: '',
    note: `${ok ? 'held' : 'FAILED'}; the load took ${fmt(loadS)} s`,
  };
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-scale-'));
  const rows = [];
  try {
    for (const m of SIZES) {
      const got = await runSize(m, work);
      console.table(got);
      rows.push(...got);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log('\n| size | measure | Quarry | DuckDB by hand | ratio | note |\n| --- | --- | --- | --- | --- | --- |');
  for (const r of rows)
    console.log(`| ${r.size} | ${r.what} | ${r.quarry} | ${r.duckdb} | ${r.ratio ?? ''} | ${r.note ?? ''} |`);
  console.log(
    `\n${RUNS} runs per p50 (searches ${RUNS * 4}), in turns; ${SECONDS} s per throughput side; cores: ${os.cpus().length}; node ${process.version}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

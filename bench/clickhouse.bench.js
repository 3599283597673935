#!/usr/bin/env node
// The crosstab engines side by side: bench/scale.bench.js's crosstabs (a), (b), (c) and a period comparison (d) through the real server
// with QUARRY_PIVOT_ENGINE=duckdb and =clickhouse (chDB in-process over the snapshots), each beside the
// same answer written by hand on its engine (DuckDB over its own file; chDB over the Parquet file), all
// four timed in turns so background load hits them alike.
//   flock /tmp/quarry-heavy.lock node bench/clickhouse.bench.js [--sizes 3,30] [--runs 5]
// Needs chDB: npm install --prefix .engines/chdb --no-save chdb@3.4.0 (scripts/test.sh runs it).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');
const { DuckDBInstance } = require('@duckdb/node-api');
const {
  ROOT,
  cli,
  startServer,
  rpc,
  timeTurns,
  fmt,
  FLIGHTS_BY_MONTH,
  FLIGHTS_CROSSTABS,
  writeFlights,
  writeDuckDbFlights,
} = require('./lib');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const SIZES = arg('--sizes', '3,30').split(',').map(Number);
const RUNS = Number(arg('--runs', '5'));
const q = (s) => `'${s.replace(/'/g, "''")}'`;
const chdb = createRequire(path.join(ROOT, '.engines/chdb/package.json'))('chdb');

/** ClickHouse's grouping sets of origin x month, as a ClickHouse user writes them. */
const CH_BY_MONTH =
  "GROUPING SETS ((origin, month), (origin), (month), ()) SETTINGS group_by_use_nulls = 1, session_timezone = 'UTC'";
const CROSSTABS = [
  {
    name: '(a) origin x month: Count',
    params: { query: '*', rows: ['origin'], columns: [{ field: 'date' }], totals: [{ aggregationType: 'Count' }] },
    duck: `SELECT origin, date_trunc('month', "date") AS month, count(*) FROM flights GROUP BY ${FLIGHTS_BY_MONTH}`,
    ch: (from) => `SELECT origin, toStartOfMonth("date") AS month, count() FROM ${from} GROUP BY ${CH_BY_MONTH}`,
  },
  {
    name: `(b) ${FLIGHTS_CROSSTABS.measures.name}`,
    params: FLIGHTS_CROSSTABS.measures.params,
    duck: FLIGHTS_CROSSTABS.measures.hand,
    ch: (from) =>
      `SELECT origin, toStartOfMonth("date") AS month, sum(toInt128(delay)), count(), uniqExact(destination) FROM ${from} GROUP BY ${CH_BY_MONTH}`,
  },
  {
    name: `(c) ${FLIGHTS_CROSSTABS.delayed.name}`,
    params: FLIGHTS_CROSSTABS.delayed.params,
    duck: FLIGHTS_CROSSTABS.delayed.hand,
    ch: (from) =>
      `SELECT origin, toStartOfMonth("date") AS month, avg(distance), max(delay) FROM ${from} WHERE delay BETWEEN 60 AND 120 GROUP BY ${CH_BY_MONTH}`,
  },
  {
    // A period comparison: the table's pass, then the records moved a month later and grouped again,
    // joined on the keys; the last month is partial in the 3M file, so the moved records stop at the last one.
    name: '(d) origin x month: Sum(delay), Sum(delay) vs previous month (difference)',
    params: {
      query: '*',
      rows: ['origin'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      totals: [
        { aggregationType: 'Sum', field: 'delay' },
        { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod', as: 'difference' } },
      ],
    },
    duck: `WITH cur AS (SELECT origin, date_trunc('month', "date") AS month, sum(delay) AS s FROM flights GROUP BY ${FLIGHTS_BY_MONTH}),
      prev AS (SELECT origin, date_trunc('month', "date" + INTERVAL 1 MONTH) AS month, sum(delay) AS s FROM flights
        WHERE "date" + INTERVAL 1 MONTH <= (SELECT max("date") FROM flights) GROUP BY ${FLIGHTS_BY_MONTH})
      SELECT cur.origin, cur.month, cur.s, cur.s - prev.s FROM cur LEFT JOIN prev
        ON cur.origin IS NOT DISTINCT FROM prev.origin AND cur.month IS NOT DISTINCT FROM prev.month`,
    ch: (from) => `WITH (SELECT max("date") FROM ${from}) AS last
      SELECT cur.origin, cur.month, cur.s, cur.s - prev.s FROM
        (SELECT origin, toStartOfMonth("date") AS month, sum(toInt128(delay)) AS s FROM ${from} GROUP BY ${CH_BY_MONTH}) AS cur
      LEFT JOIN
        (SELECT origin, toStartOfMonth(addMonths("date", 1)) AS month, sum(toInt128(delay)) AS s FROM ${from}
          WHERE addMonths("date", 1) <= last GROUP BY ${CH_BY_MONTH}) AS prev
      ON isNotDistinctFrom(cur.origin, prev.origin) AND isNotDistinctFrom(cur.month, prev.month)
      SETTINGS group_by_use_nulls = 1, session_timezone = 'UTC'`,
  },
];

async function runSize(millions, work) {
  const file = path.join(work, `flights-${millions}m.parquet`);
  await writeFlights(millions, file, path.join(work, 'gen-tmp'));
  const dataDir = path.join(work, `data-${millions}m`);
  const env = { QUARRY_DATA_DIR: dataDir };
  await cli(['index', 'load', 'flights', file, '--type', 'date=date:month', '--view', 'Destinations=destination'], env);
  await cli(['user', 'create', 'bench', '--indexes', '*'], env);
  const token = (await cli(['token', 'create', '--user', 'bench', '--scopes', 'query:execute'], env))
    .trim()
    .split('\n')
    .pop();
  const snapshot = fs.readdirSync(path.join(dataDir, 'indexes', 'flights')).find((f) => f.endsWith('.parquet'));
  const from = `file(${q(path.join(dataDir, 'indexes', 'flights', snapshot))}, Parquet)`;

  const dbFile = path.join(work, `hand-${millions}m.duckdb`);
  await writeDuckDbFlights(dbFile, file);
  const hand = await DuckDBInstance.create(dbFile, { access_mode: 'READ_ONLY', threads: '2' });
  const hc = await hand.connect();
  const servers = {
    duckdb: await startServer({ ...env, QUARRY_CACHE_MB: '0' }),
    clickhouse: await startServer({ ...env, QUARRY_CACHE_MB: '0', QUARRY_PIVOT_ENGINE: 'clickhouse' }),
  };
  const rows = [];
  try {
    for (const c of CROSSTABS) {
      const params = { index: 'flights', cache: false, ...c.params };
      const fns = {
        quarryDuck: () => rpc(servers.duckdb.port, token, 'CROSSTAB.EXECUTE', params),
        duck: () => hc.runAndReadAll(c.duck),
        quarryCh: () => rpc(servers.clickhouse.port, token, 'CROSSTAB.EXECUTE', params),
        ch: () => chdb.queryAsync(c.ch(from), { format: 'JSONCompact' }),
      };
      for (const fn of Object.values(fns)) await fn(); // warm: pages read, statements planned
      const t = await timeTurns(RUNS, fns);
      rows.push({
        size: `${millions}M`,
        crosstab: c.name,
        'Quarry on DuckDB p50 ms': fmt(t.quarryDuck.p50),
        'DuckDB by hand': fmt(t.duck.p50),
        'ratio (DuckDB)': fmt(t.quarryDuck.p50 / t.duck.p50),
        'Quarry on ClickHouse p50 ms': fmt(t.quarryCh.p50),
        'chDB by hand': fmt(t.ch.p50),
        'ratio (ClickHouse)': fmt(t.quarryCh.p50 / t.ch.p50),
        'ClickHouse / DuckDB (Quarry)': fmt(t.quarryCh.p50 / t.quarryDuck.p50),
      });
    }
  } finally {
    await servers.duckdb.stop();
    await servers.clickhouse.stop();
    hc.closeSync();
    hand.closeSync();
  }
  return rows;
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-clickhouse-bench-'));
  try {
    const rows = [];
    for (const m of SIZES) rows.push(...(await runSize(m, work)));
    console.table(rows);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

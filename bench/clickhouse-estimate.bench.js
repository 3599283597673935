#!/usr/bin/env node
// The ClickHouse adapter's cell-limit estimate on chDB (its keys: origin x destination x day, as
// scale.bench.js's refused crosstab), by hand on the same SQL, in one run: the first 100,000 records of
// the file (the first build), every k-th record read from the file (what a thorough estimate reads),
// the same subset copied once into a Memory table and read from it (what every estimate reads after the
// first), and counting every key (what the estimate spares).
//   flock /tmp/quarry-heavy.lock node bench/clickhouse-estimate.bench.js [--sizes 3,30] [--runs 5]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');
const { ROOT, fmt, writeFlights } = require('./lib');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const SIZES = arg('--sizes', '3,30').split(',').map(Number);
const RUNS = Number(arg('--runs', '5'));
const chdb = createRequire(path.join(ROOT, '.engines/chdb/package.json'))('chdb');
const KEYS = 'uniqExact(tuple(origin, destination, toDate32("date"), 0)) AS keys, count() AS records';

async function p50(sql) {
  const times = [];
  let out;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    out = JSON.parse((await chdb.queryAsync(sql, { format: 'JSONEachRow' })).text());
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], out };
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-ch-estimate-'));
  const rows = [];
  try {
    for (const m of SIZES) {
      const file = path.join(work, `flights-${m}m.parquet`);
      await writeFlights(m, file, path.join(work, 'gen-tmp'));
      const from = `file('${file}', Parquet)`;
      const k = Math.floor((m * 1e6) / 100000);
      const table = `quarry_estimate_bench_${m}`;
      const copy = performance.now();
      await chdb.queryAsync(
        `CREATE TABLE ${table} ENGINE = Memory AS SELECT * FROM ${from} WHERE _row_number % ${k} = 0`,
      );
      const copied = performance.now() - copy;
      const ways = {
        'first 100,000 records of the file (first build)': `SELECT ${KEYS} FROM (SELECT * FROM ${from} LIMIT 100000)`,
        'every k-th record, read from the file': `SELECT ${KEYS} FROM ${from} WHERE _row_number % ${k} = 0`,
        'every k-th record, kept in memory (now)': `SELECT ${KEYS} FROM ${table}`,
        'every record: the keys counted': `SELECT ${KEYS} FROM ${from}`,
      };
      for (const [way, sql] of Object.entries(ways)) {
        const r = await p50(sql);
        rows.push({ size: `${m}M`, way, 'p50 ms': fmt(r.ms), 'keys seen': r.out.keys, records: r.out.records });
      }
      rows.push({ size: `${m}M`, way: 'copying the kept subset (once per process)', 'p50 ms': fmt(copied) });
      await chdb.queryAsync(`DROP TABLE ${table}`);
    }
    console.table(rows);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

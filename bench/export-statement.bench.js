#!/usr/bin/env node
// The export's DuckDB statement alone, without the server: flights-3m loaded by the CLI, then the COPY the
// query service issues for "every record sorted by delay", in a DuckDB opened as the service opens its
// export DuckDB (QUARRY_EXPORT_MEMORY_MB, its spill folder, the version's file attached), beside DuckDB's
// own `COPY (SELECT * FROM read_parquet(...) ORDER BY delay) TO ...`, turn about. Each statement runs in a
// fresh instance (as the service now opens one per export) and again in one instance kept open across
// them (as it did before); the CSV once with the formula guard the service uses and once with the two
// regular expressions it used before. What the server adds on top is bench/export.bench.js minus this.
// Usage: npm run build && node bench/export-statement.bench.js [--runs 5] [--export-mb 192]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');
const { SnapshotEngine, exportEngineOptions, literal } = require('../packages/snapshots/dist');
const { VEGA, benchData, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 5;
const MB = Number(process.argv[process.argv.indexOf('--export-mb') + 1]) || 192;
const FILE = path.join(VEGA, 'flights-3m.parquet');
const FIELDS = ['date', 'delay', 'distance', 'origin', 'destination'].map((f) => `"${f}"`);
const STORED = FIELDS.join(', ');
const NUMBER = `'-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?'`;
const GUARDS = {
  // As the query service writes it now: the first character's code point, the number pattern only then.
  'code point': (c) =>
    `CASE WHEN unicode(${c}) IN (61, 43, 45, 64, 59, 9, 13, 10, 65309, 65291, 65293, 65312, 65307) AND NOT regexp_full_match(${c}, ${NUMBER}) THEN '''' || ${c} ELSE ${c} END`,
  // As it wrote it before: two regular expressions on every text cell.
  'two regexes': (c) =>
    `CASE WHEN regexp_matches(${c}, '^[=+\\-@;\\t\\r\\n\uFF1D\uFF0B\uFF0D\uFF20\uFF1B]') AND NOT regexp_matches(${c}, '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$') THEN '''' || ${c} ELSE ${c} END`,
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function statements(table, out) {
  const sorted = `SELECT ${STORED} FROM ${table} WHERE true ORDER BY "delay" ASC NULLS LAST, __rowid ASC`;
  const csv = (guard) =>
    `COPY (SELECT strftime("date", '%Y-%m-%dT%H:%M:%S') AS "date", "delay", "distance", ${guard('"origin"')} AS "origin", ${guard('"destination"')} AS "destination" FROM (${sorted}) AS sorted) TO ${literal(`${out}.csv`)} (FORMAT csv, HEADER true)`;
  return {
    'csv, code point guard': csv(GUARDS['code point']),
    'csv, two regexes': csv(GUARDS['two regexes']),
    parquet: `COPY (SELECT ${STORED} FROM (${sorted}) AS sorted) TO ${literal(`${out}.parquet`)} (FORMAT parquet, COMPRESSION zstd)`,
  };
}

async function main() {
  const { dataDir } = await benchData('export-statement', [['flights', FILE]], 'query:execute');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-export-statement-'));
  const dir = path.join(dataDir, 'indexes', 'flights');
  const parquet = fs.readdirSync(dir).find((n) => n.endsWith('.parquet'));
  const ref = { name: 'flights', version: 1, snapshot: path.relative(dataDir, path.join(dir, parquet)), fields: [] };
  const options = () => exportEngineOptions({ dataDir, exportMemoryBytes: MB * 1048576 });
  const times = {};
  const add = (k, secs) => (times[k] ??= []).push(secs);
  const kept = new SnapshotEngine(dataDir, options());
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const name of Object.keys(statements('t', ''))) {
        const fresh = new SnapshotEngine(dataDir, options());
        const t0 = process.hrtime.bigint();
        const { table } = await fresh.table(ref);
        const t1 = process.hrtime.bigint();
        await fresh.all(statements(`"${table}"`, path.join(scratch, 'fresh'))[name]);
        add(`${name}: fresh instance`, Number(process.hrtime.bigint() - t1) / 1e9);
        add('opening an instance and attaching the version', Number(t1 - t0) / 1e9);
        await fresh.close();
        const k = (await kept.table(ref)).table;
        const t2 = process.hrtime.bigint();
        await kept.all(statements(`"${k}"`, path.join(scratch, 'kept'))[name]);
        add(`${name}: instance kept open`, Number(process.hrtime.bigint() - t2) / 1e9);
      }
      for (const format of ['csv', 'parquet']) {
        const db = await DuckDBInstance.create(':memory:');
        const c = await db.connect();
        const options = format === 'csv' ? '(FORMAT csv, HEADER true)' : '(FORMAT parquet, COMPRESSION zstd)';
        const t = process.hrtime.bigint();
        await c.run(
          `COPY (SELECT * FROM read_parquet(${literal(FILE)}) ORDER BY delay) TO ${literal(path.join(scratch, `direct.${format}`))} ${options}`,
        );
        add(`DuckDB's own COPY, ${format}`, Number(process.hrtime.bigint() - t) / 1e9);
        c.closeSync();
        db.closeSync();
      }
    }
    console.log(`export DuckDB limit ${MB} MB, medians of ${RUNS} (seconds):`);
    for (const [k, v] of Object.entries(times))
      console.log(`  ${k.padEnd(50)} ${fmt(median(v))}  (${v.map(fmt).join(', ')})`);
  } finally {
    await kept.close();
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

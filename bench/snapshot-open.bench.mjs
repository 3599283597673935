/* global process, console, performance */
// How a process should open a published version (issue #30 item 1), each way in a fresh process:
// plain = DuckDB reopening its own file (the baseline), attach = Quarry's DuckDB-format snapshot attached
// read-only, parquet = the Parquet file queried in place, memory = read into memory (the old way).
// Prints open time, first and settled crosstab, a word match, and RSS (base, after open, peak).
// Usage: node bench/snapshot-open.bench.mjs build <file.parquet>, then each of plain attach parquet memory.
// node opt.mjs <mode> <parquet> ; mode: build | attach | parquet | memory | plain
import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
const [mode, pq] = process.argv.slice(2);
const db = pq + '.q.duckdb',
  plain = pq + '.plain.duckdb';
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const rss = () => process.memoryUsage().rss / 1048576;
const words = (c) =>
  `' ' || array_to_string(list_filter(regexp_split_to_array(lower("${c}"), '[^\\pL\\pN]+'), x -> x <> ''), ' ') || ' '`;
const sel = `SELECT file_row_number AS __rowid, * EXCLUDE (file_row_number), ${words('origin')} AS "__w:origin", ${words('destination')} AS "__w:destination" FROM read_parquet('${pq}', file_row_number = true)`;
const Q = (t) => `SELECT origin, date_trunc('month', date) m, count(*) n FROM ${t} GROUP BY 1, 2`;
const Q2 = (t) => `SELECT count(*) n FROM ${t} WHERE "__w:origin" LIKE '% sfo %'`;
if (mode === 'build') {
  for (const f of [db, plain]) fs.rmSync(f, { force: true });
  let t = Date.now();
  const i = await DuckDBInstance.create(db, { preserve_insertion_order: 'true', memory_limit: '2GB', threads: '2' });
  const c = await i.connect();
  await c.run(`CREATE TABLE records AS ${sel}`);
  await c.run('CHECKPOINT');
  c.closeSync();
  i.closeSync();
  console.log(JSON.stringify({ mode, buildMs: Date.now() - t, bytes: fs.statSync(db).size }));
  t = Date.now();
  const j = await DuckDBInstance.create(plain, { memory_limit: '2GB', threads: '2' });
  const d = await j.connect();
  await d.run(`CREATE TABLE flights AS SELECT * FROM read_parquet('${pq}')`);
  await d.run('CHECKPOINT');
  d.closeSync();
  j.closeSync();
  console.log(JSON.stringify({ mode: 'plain-build', buildMs: Date.now() - t, bytes: fs.statSync(plain).size }));
  process.exit(0);
}
const base = rss();
const t0 = performance.now();
let i, c, table;
if (mode === 'plain') {
  i = await DuckDBInstance.create(plain, { access_mode: 'READ_ONLY', threads: '2' });
  c = await i.connect();
  table = 'flights';
} else {
  i = await DuckDBInstance.create(':memory:', { threads: '2', preserve_insertion_order: 'true' });
  c = await i.connect();
  if (mode === 'attach') {
    await c.run(`ATTACH '${db}' AS s (READ_ONLY)`);
    table = 's.main.records';
  } else if (mode === 'parquet') {
    await c.run(`CREATE VIEW v AS ${sel}`);
    table = 'v';
  } else if (mode === 'memory') {
    await c.run(`ATTACH ':memory:' AS s (COMPRESS)`);
    await c.run(`CREATE TABLE s.main.records AS ${sel}`);
    await c.run('CHECKPOINT s');
    table = 's.main.records';
  }
}
const open = performance.now() - t0;
const afterOpen = rss();
const t1 = performance.now();
await c.runAndReadAll(Q(table));
const first = performance.now() - t1;
const times = [];
for (let k = 0; k < 5; k++) {
  const t = performance.now();
  await c.runAndReadAll(Q(table));
  times.push(performance.now() - t);
}
const wt = [];
for (let k = 0; k < 5; k++) {
  const t = performance.now();
  if (mode !== 'plain') await c.runAndReadAll(Q2(table));
  wt.push(performance.now() - t);
}
times.sort((a, b) => a - b);
wt.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    mode,
    openMs: +open.toFixed(1),
    firstCrosstabMs: +first.toFixed(1),
    settledMs: +times[2].toFixed(1),
    wordMs: +wt[2].toFixed(1),
    baseMb: +base.toFixed(0),
    afterOpenMb: +afterOpen.toFixed(0),
    peakMb: +hwm().toFixed(0),
    settledRssMb: +rss().toFixed(0),
  }),
);

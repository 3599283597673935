#!/usr/bin/env node
// Export benchmark on flights-3m.parquet (3,000,000 rows): EXPORTS.START of every record sorted by delay,
// as CSV and as Parquet, timed from the call to the done status, beside DuckDB's own
// `COPY (SELECT * FROM read_parquet(...) ORDER BY delay) TO ...` of the same file in the same run, with the
// server's RSS (the whole process tree) sampled while each export runs.
// With --ten-million: the scale bench's data (flights-3m copied with its dates a year later per copy) cut at
// 10,000,000 rows, exported as CSV and as Parquet, in record order and sorted by delay, each beside the same
// export of the 3M rows and DuckDB's own COPY of the 10M rows, to show the server's memory does not grow
// with the rows. Nothing is capped by hand: exports run in the query service's export DuckDB, under
// QUARRY_EXPORT_MEMORY_MB (its default unless --export-mb N says otherwise).
// --duckdb-mb N: the searches' and crosstabs' DuckDB limit (QUARRY_DUCKDB_MEMORY_MB), which exports no
// longer use.
// --progress-ms N: how often the gateway reads a running export's file for its status (QUARRY_EXPORT_PROGRESS_MS).
// Usage: npm run build && node bench/export.bench.js [--runs 3] [--ten-million] [--export-mb 192] [--duckdb-mb 512]
//   [--progress-ms 500]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');
const { literal } = require('../packages/snapshots/dist');
const { VEGA, cli, startServer, rpc, benchData, processTree, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3;
const FILE = path.join(VEGA, 'flights-3m.parquet');
const ROWS = 3_000_000;
const TEN_MILLION = 10_000_000;

const rssKbOf = (pid) => processTree(pid).reduce((sum, p) => sum + p.rssKb, 0);
/** The server's largest RSS seen during any export of the run. */
let runPeakKb = 0;
/** The server's RSS before its first export: growth from it is the run's, against the same 400 MB. */
let idleKb = 0;
/** The server's RSS now and the largest seen so far, each process of its tree named. */
function checkpoint(server, what) {
  const tree = processTree(server.child.pid);
  const parts = tree.map((p) => `${p.comm} ${Math.round(p.rssKb / 1024)}`).join(', ');
  console.log(
    `server RSS ${what}: ${Math.round(rssKbOf(server.child.pid) / 1024)} MB (${parts}); largest during an export so far ${Math.round(runPeakKb / 1024)} MB`,
  );
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function exportOnce(server, token, format, { index = 'flights', rows = ROWS, sorted = true } = {}) {
  const before = rssKbOf(server.child.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKbOf(server.child.pid))), 50);
  const t = process.hrtime.bigint();
  const { exportId } = await rpc(server.port, token, 'EXPORTS.START', {
    method: 'QUERIES.EXECUTE',
    params: { index, query: '*', ...(sorted ? { sort: [{ field: 'delay', direction: 'asc' }] } : {}) },
    format,
  });
  let status;
  for (;;) {
    status = await rpc(server.port, token, 'EXPORTS.STATUS', { exportId });
    if (status.state === 'done' || status.state === 'failed') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const secs = Number(process.hrtime.bigint() - t) / 1e9;
  clearInterval(sampler);
  runPeakKb = Math.max(runPeakKb, peak);
  if (status.state !== 'done') throw new Error(`export failed: ${status.error}`);
  if (status.rowsWritten !== rows) throw new Error(`exported ${status.rowsWritten} rows, not ${rows}`);
  return { secs, bytes: status.bytes, growthMb: (peak - before) / 1024, fromIdleMb: (peak - idleKb) / 1024 };
}

/** What the server holds once an export is over and it has had a moment: what it kept, from idle. */
async function settledMb(server) {
  await new Promise((r) => setTimeout(r, 2000));
  return Math.round((rssKbOf(server.child.pid) - idleKb) / 1024);
}

async function duckdbOnce(dir, format, file = FILE) {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const out = path.join(dir, `direct.${format}`);
  const options = format === 'csv' ? '(FORMAT csv, HEADER true)' : '(FORMAT parquet, COMPRESSION zstd)';
  const t = process.hrtime.bigint();
  await c.run(`COPY (SELECT * FROM read_parquet(${literal(file)}) ORDER BY delay) TO ${literal(out)} ${options}`);
  const secs = Number(process.hrtime.bigint() - t) / 1e9;
  const bytes = fs.statSync(out).size;
  c.closeSync();
  fs.rmSync(out);
  return { secs, bytes };
}

/** The scale bench's rows: flights-3m four times, a year later each time, cut at ten million. */
async function tenMillion(dir) {
  const file = path.join(dir, 'flights-10m.parquet');
  const gen = await DuckDBInstance.create(':memory:', { memory_limit: '2GB', temp_directory: path.join(dir, 'tmp') });
  const g = await gen.connect();
  await g.run(
    `COPY (SELECT "date" + to_years(CAST(k AS INTEGER)) AS "date", delay, distance, origin, destination FROM range(4) r(k), read_parquet(${literal(FILE)}) ORDER BY k LIMIT ${TEN_MILLION}) TO ${literal(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)`,
  );
  g.closeSync();
  gen.closeSync();
  return file;
}

async function scale(server, token, env, scratch) {
  const file = await tenMillion(scratch);
  await cli(['index', 'load', 'flights10m', file], env);
  checkpoint(server, 'after loading the 10M rows');
  console.log(
    '3M against 10M rows (server RSS growth: the whole process tree, the largest of the runs; DuckDB COPY of the 10M rows in this process):',
  );
  const growth = (xs) => Math.round(Math.max(...xs.map((r) => r.growthMb)));
  for (const format of ['csv', 'parquet']) {
    for (const sorted of [false, true]) {
      const small = [];
      const big = [];
      const direct = [];
      for (let i = 0; i < RUNS; i++) {
        small.push(await exportOnce(server, token, format, { sorted }));
        big.push(await exportOnce(server, token, format, { index: 'flights10m', rows: TEN_MILLION, sorted }));
        if (sorted) direct.push(await duckdbOnce(scratch, format, file));
      }
      checkpoint(server, `after ${format} ${sorted ? 'sorted' : 'in record order'}`);
      const q = median(big.map((r) => r.secs));
      const d = direct.length ? median(direct.map((r) => r.secs)) : undefined;
      console.log(
        `  ${format.padEnd(7)} ${sorted ? 'sorted by delay' : 'record order   '}: 3M ${fmt(median(small.map((r) => r.secs)))} s, +${growth(small)} MB; ` +
          `10M ${fmt(q)} s (${fmt(big[0].bytes / 1e6)} MB), +${growth(big)} MB` +
          (d === undefined ? '' : `; DuckDB COPY of the 10M ${fmt(d)} s: ${fmt(q / d)}x`),
      );
      console.log(
        `    RSS growth of each run: 3M ${small.map((r) => Math.round(r.growthMb)).join(', ')} MB; 10M ${big.map((r) => Math.round(r.growthMb)).join(', ')} MB; ` +
          `largest from idle: 3M +${Math.round(Math.max(...small.map((r) => r.fromIdleMb)))} MB, 10M +${Math.round(Math.max(...big.map((r) => r.fromIdleMb)))} MB; ` +
          `kept 2 s after: +${await settledMb(server)} MB`,
      );
    }
  }
}

async function main() {
  const { dataDir, env, token } = await benchData('export', [['flights', FILE]], 'query:execute');
  const duckdbMb = process.argv.indexOf('--duckdb-mb');
  const exportMb = process.argv.indexOf('--export-mb');
  const progressMs = process.argv.indexOf('--progress-ms');
  const server = await startServer({
    ...env,
    QUARRY_EXPORT_MAX_ROWS: String(TEN_MILLION),
    ...(duckdbMb > 0 ? { QUARRY_DUCKDB_MEMORY_MB: process.argv[duckdbMb + 1] } : {}),
    ...(exportMb > 0 ? { QUARRY_EXPORT_MEMORY_MB: process.argv[exportMb + 1] } : {}),
    ...(progressMs > 0 ? { QUARRY_EXPORT_PROGRESS_MS: process.argv[progressMs + 1] } : {}),
  });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-export-direct-'));
  try {
    // What the server holds before any export: every growth after it counts in the run's total below.
    idleKb = rssKbOf(server.child.pid);
    checkpoint(server, 'before the first export');
    // One export first, unmeasured: the first search of a version opens its snapshot.
    await exportOnce(server, token, 'csv');
    for (const [format, target] of [
      ['csv', 2],
      ['parquet', 1.5],
    ]) {
      const quarry = [];
      const direct = [];
      // Turn about, so neither side always runs on a warmer machine.
      for (let i = 0; i < RUNS; i++) {
        quarry.push(await exportOnce(server, token, format));
        direct.push(await duckdbOnce(scratch, format));
      }
      const q = median(quarry.map((r) => r.secs));
      const d = median(direct.map((r) => r.secs));
      const growth = Math.max(...quarry.map((r) => r.growthMb));
      const fromIdle = Math.max(...quarry.map((r) => r.fromIdleMb));
      console.log(
        `${format}: Quarry ${fmt(q)} s (${fmt(quarry[0].bytes / 1e6)} MB) vs DuckDB COPY ${fmt(d)} s ` +
          `(${fmt(direct[0].bytes / 1e6)} MB): ${fmt(q / d)}x (target <= ${target}x); ` +
          `server RSS growth during the export, max of ${RUNS}: ${Math.round(growth)} MB, from idle ${Math.round(fromIdle)} MB ` +
          `(target <= 400 MB each); kept 2 s after: +${await settledMb(server)} MB`,
      );
      console.log(
        `  runs: Quarry ${quarry.map((r) => fmt(r.secs)).join(', ')} s; DuckDB ${direct.map((r) => fmt(r.secs)).join(', ')} s`,
      );
    }
    checkpoint(server, 'after the 3M exports');
    if (process.argv.includes('--ten-million')) await scale(server, token, env, scratch);
    checkpoint(server, 'at the end');
    console.log(
      `server RSS before the first export ${Math.round(idleKb / 1024)} MB, largest during any export of the run ` +
        `${Math.round(runPeakKb / 1024)} MB: +${Math.round((runPeakKb - idleKb) / 1024)} MB over the whole run (target <= 400 MB)`,
    );
  } finally {
    await server.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

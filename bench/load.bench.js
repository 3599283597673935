#!/usr/bin/env node
// Strict loading (issue 24) beside the same load written by hand in DuckDB into a database file, in one
// run, alternating: flights-3m.parquet (3,000,000 rows) and a generated 1,000,000-row CSV. Quarry's
// side is `buildSnapshot` (what `quarry index load` runs: header check, strict rows with rejects,
// lossless types, a Parquet snapshot) and the whole CLI; the baseline is `CREATE TABLE … AS SELECT`
// from read_parquet, and from read_csv with strict_mode and store_rejects.
// With --sizes 3,30 also copies of flights-3m at 30M rows (bench/lib.js writeFlights), loaded the same way.
// With --memory it also loads a generated ~1 GB CSV through the CLI and samples its RSS.
// Usage: npm run build && node bench/load.bench.js [--runs 3] [--sizes 3,30] [--memory]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { DuckDBInstance } = require('@duckdb/node-api');
const { VEGA, BIN, fmt, writeFlights } = require('./lib');
const { buildSnapshot } = require('../packages/snapshots/dist');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3;
const MEMORY = process.argv.includes('--memory');
const SIZES = (process.argv.includes('--sizes') ? process.argv[process.argv.indexOf('--sizes') + 1] : '3')
  .split(',')
  .map(Number);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-load-'));

function writeCsv(file, rows) {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, 'id,origin,destination,delay,distance,date,zip,flag,note\n');
  const origins = ['LAX', 'SFO', 'JFK', 'ORD', 'SEA'];
  let chunk = [];
  for (let i = 0; i < rows; i++) {
    const day = `2001-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`;
    chunk.push(
      `${i},${origins[i % 5]},${origins[(i + 2) % 5]},${(i % 97) - 20},${100 + (i % 3000)},${day} ${String(i % 24).padStart(2, '0')}:15:00,0${2000 + (i % 999)},${i % 2 ? 'true' : 'false'},"note ${i}, with a comma"`,
    );
    if (chunk.length === 10000) {
      fs.writeSync(fd, chunk.join('\n') + '\n');
      chunk = [];
    }
  }
  if (chunk.length) fs.writeSync(fd, chunk.join('\n') + '\n');
  fs.closeSync(fd);
}

async function byHand(sql) {
  const db = path.join(dir, `hand-${Date.now()}.duckdb`);
  const inst = await DuckDBInstance.create(db);
  const c = await inst.connect();
  const t = performance.now();
  await c.run(sql);
  c.closeSync();
  inst.closeSync();
  const ms = performance.now() - t;
  fs.rmSync(db, { force: true });
  fs.rmSync(`${db}.wal`, { force: true });
  return ms;
}

async function quarry(file) {
  const dataDir = path.join(dir, `data-${Date.now()}`);
  const t = performance.now();
  const built = await buildSnapshot({ name: 'b', file, dataDir, types: {}, views: [] });
  const ms = performance.now() - t;
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { ms, rows: built.recordCount };
}

function quarryCli(file, dataDir, sample) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [BIN, 'index', 'load', 'b', file], {
      env: { ...process.env, QUARRY_DATA_DIR: dataDir },
    });
    let peak = 0;
    const timer = sample
      ? setInterval(() => {
          try {
            const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
            peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024);
          } catch {
            // the process has exited between two samples
          }
        }, 50)
      : undefined;
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      if (timer) clearInterval(timer);
      if (code !== 0) reject(new Error(err));
      else resolve({ ms: performance.now() - t, peak });
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const parquet = path.join(VEGA, 'flights-3m.parquet');
  const csv = path.join(dir, 'flights-1m.csv');
  writeCsv(csv, 1_000_000);
  const larger = [];
  for (const m of SIZES.filter((x) => x !== 3)) {
    const file = path.join(dir, `flights-${m}m.parquet`);
    await writeFlights(m, file, path.join(dir, 'gen-tmp'));
    larger.push({
      name: `flights-3m.parquet copied to ${m}M rows`,
      file,
      hand: `CREATE TABLE t AS SELECT * FROM read_parquet('${file}')`,
    });
  }
  const cases = [
    {
      name: 'flights-3m.parquet (3,000,000 rows)',
      file: parquet,
      hand: `CREATE TABLE t AS SELECT * FROM read_parquet('${parquet}')`,
    },
    ...larger,
    {
      name: `generated CSV (1,000,000 rows, ${(fs.statSync(csv).size / 1e6).toFixed(0)} MB)`,
      file: csv,
      hand: `CREATE TABLE t AS SELECT * FROM read_csv('${csv}', strict_mode = true, store_rejects = true)`,
    },
  ];
  const table = [];
  for (const c of cases) {
    const hand = [];
    const ours = [];
    const clis = [];
    await quarry(c.file); // warm the page cache for both sides
    for (let i = 0; i < RUNS; i++) {
      hand.push(await byHand(c.hand));
      ours.push((await quarry(c.file)).ms);
      const dataDir = path.join(dir, `cli-${i}`);
      clis.push((await quarryCli(c.file, dataDir, false)).ms);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    table.push({
      source: c.name,
      'DuckDB by hand ms': fmt(median(hand)),
      'Quarry build ms': fmt(median(ours)),
      'ratio (target <= 2)': fmt(median(ours) / median(hand)),
      'quarry index load (CLI, whole) ms': fmt(median(clis)),
      'CLI ratio': fmt(median(clis) / median(hand)),
    });
  }
  console.table(table);
  console.log(`median of ${RUNS} runs each, in turns; cores: ${os.cpus().length}; node ${process.version}`);

  if (MEMORY) {
    const big = path.join(dir, 'big.csv');
    writeCsv(big, 12_500_000);
    const size = fs.statSync(big).size;
    fs.writeFileSync(path.join(dir, 'tiny.csv'), 'a\n1\n');
    const small = await quarryCli(path.join(dir, 'tiny.csv'), path.join(dir, 'idle2'), true);
    const loaded = await quarryCli(big, path.join(dir, 'mem'), true);
    console.log(
      `${(size / 1e9).toFixed(2)} GB CSV: load ${(loaded.ms / 1000).toFixed(1)} s, peak RSS ${(loaded.peak / 1e6).toFixed(0)} MB; ` +
        `a 4-byte load peaks at ${(small.peak / 1e6).toFixed(0)} MB: ${((loaded.peak - small.peak) / 1e6).toFixed(0)} MB above it (target < 1000)`,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});

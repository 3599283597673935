#!/usr/bin/env node
// An upload over HTTP (POST /indexes/<name>/records, issue 56) beside what a user does without it, in
// one run, alternating: flights-3m.parquet (3,000,000 rows) and the same rows as a gzipped CSV. Quarry's
// side: the file streamed to a running server (gateway → ingest → the loader, one version published);
// beside it `quarry index load` of the same file on the server (the shell way), and DuckDB by hand
// writing its own database file (`CREATE TABLE … AS SELECT * FROM read_parquet/read_csv`, then closed).
// The server's memory (PSS of the process tree) is sampled during each upload.
// Usage: npm run build && node bench/upload.bench.js [--runs 3]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { pipeline } = require('node:stream/promises');
const { DuckDBInstance } = require('@duckdb/node-api');
const { VEGA, cli, fmt, processTree, startServer } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 3;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-upload-'));
const PARQUET = path.join(VEGA, 'flights-3m.parquet');
const CSV = path.join(dir, 'flights-3m.csv');
const CSV_GZ = `${CSV}.gz`;

async function byHand(read) {
  const db = path.join(dir, `hand-${Date.now()}.duckdb`);
  const inst = await DuckDBInstance.create(db);
  const c = await inst.connect();
  const t = performance.now();
  await c.run(`CREATE TABLE flights AS SELECT * FROM ${read}`);
  c.closeSync();
  inst.closeSync();
  const ms = performance.now() - t;
  fs.rmSync(db, { force: true });
  fs.rmSync(`${db}.wal`, { force: true });
  return ms;
}

const pssMb = (pid) => processTree(pid).reduce((sum, p) => sum + p.pssKb, 0) / 1024;

async function upload(server, token, name, file, headers) {
  let peak = 0;
  const before = pssMb(server.child.pid);
  const sampler = setInterval(() => (peak = Math.max(peak, pssMb(server.child.pid))), 100);
  const t = performance.now();
  const res = await fetch(`http://127.0.0.1:${server.port}/indexes/${name}/records`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, ...headers },
    body: fs.createReadStream(file),
    duplex: 'half',
  });
  const answer = await res.json();
  const ms = performance.now() - t;
  clearInterval(sampler);
  if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${JSON.stringify(answer)}`);
  return { ms, rows: answer.loaded, grewMb: Math.max(0, peak - before) };
}

async function main() {
  // The same rows as a gzipped CSV, written by DuckDB once.
  {
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    await c.run(`COPY (SELECT * FROM read_parquet('${PARQUET}')) TO '${CSV}' (HEADER)`);
    c.closeSync();
    await pipeline(fs.createReadStream(CSV), zlib.createGzip({ level: 6 }), fs.createWriteStream(CSV_GZ));
  }
  const dataDir = path.join(dir, 'data');
  const env = { QUARRY_DATA_DIR: dataDir };
  await cli(['user', 'create', 'bench', '--admin'], env);
  const token = (await cli(['token', 'create', '--user', 'bench', '--scopes', 'indexes:write,query:execute'], env))
    .trim()
    .split('\n')
    .pop();
  const server = await startServer(env);
  const cases = [
    {
      name: 'flights-3m.parquet',
      file: PARQUET,
      headers: { 'Content-Type': 'application/vnd.apache.parquet' },
      hand: `read_parquet('${PARQUET}')`,
    },
    {
      name: 'flights-3m.csv.gz',
      file: CSV_GZ,
      // Without uploads the user unzips it first, then loads the CSV on the server.
      local: CSV,
      headers: { 'Content-Type': 'text/csv', 'Content-Encoding': 'gzip' },
      hand: `read_csv('${CSV}', header = true, strict_mode = true)`,
    },
  ];
  try {
    for (const c of cases) {
      const up = [];
      const load = [];
      const hand = [];
      const grew = [];
      for (let i = 0; i < RUNS; i++) {
        const u = await upload(server, token, `up${i}`, c.file, c.headers);
        up.push(u.ms);
        grew.push(u.grewMb);
        const t = performance.now();
        await cli(['index', 'load', `cli${i}`, c.local ?? c.file], env);
        load.push(performance.now() - t);
        hand.push(await byHand(c.hand));
      }
      const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      console.log(`${c.name} (${fmt(3_000_000)} rows, ${RUNS} runs, medians):`);
      console.log(
        `  upload over HTTP      ${fmt(med(up))} ms   (server grew ${Math.round(Math.max(...grew))} MB at most)`,
      );
      console.log(`  quarry index load     ${fmt(med(load))} ms`);
      console.log(`  DuckDB by hand        ${fmt(med(hand))} ms`);
      console.log(
        `  ratios: upload / by hand ${(med(up) / med(hand)).toFixed(2)}×, upload / CLI load ${(med(up) / med(load)).toFixed(2)}×`,
      );
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

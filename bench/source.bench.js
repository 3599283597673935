#!/usr/bin/env node
// A PostgreSQL source (SOURCES.*, issue 56) beside what a user does without it, in one run: 3,000,000 rows
// of flights (flights-3m.parquet with an `id bigint` primary key added) in a private PostgreSQL 15 the
// bench starts (initdb in a temp folder, as tests/support/postgres.ts does). By hand: `psql -c "\copy
// (SELECT * FROM flights) TO file CSV HEADER"`, then DuckDB `CREATE TABLE flights AS SELECT * FROM
// read_csv(file)` into a database file it closes. Quarry's side: the real server (QUARRY_TARGET=all),
// SOURCES.CREATE {kind: postgres, table: flights, refresh: {mode: append, cursor: id}}, then SOURCES.RUN
// timed until SOURCES.RUNS says done, the server's memory (RSS and PSS of its process tree) sampled
// meanwhile; then 30,000 new rows (1 %) inserted and an append run timed (only they are read).
// Where a run's time goes: queued (RUN → startedAt), the read of PostgreSQL into the staged CSV (until the
// ingest service's connection, application_name quarry-ingest, leaves pg_stat_activity), then the load
// of the staged file and the publish (until the server logs "source run published").
// Figures, not pass/fail: each target is printed met or not, and the script exits 0 when it ran.
// Usage: npm run build && node bench/source.bench.js [--runs 1] [--rows 3000000] [--logs FILE (keeps the server's log)]
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pg = require('pg');
const { DuckDBInstance } = require('@duckdb/node-api');
const { VEGA, cli, cpuMsOf, fmt, freePort, processTree, rpc, startServer } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 1;
const LOGS = process.argv.includes('--logs') ? process.argv[process.argv.indexOf('--logs') + 1] : undefined;
const PARQUET = path.join(VEGA, 'flights-3m.parquet');
// --rows N: a smaller table (a quick check that the bench runs end to end; the targets are for 3M).
const ROWS = Number(process.argv[process.argv.indexOf('--rows') + 1]) || 3_000_000;
const NEW_ROWS = Math.floor(ROWS / 100);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-source-'));
const q = (s) => `'${s.replace(/'/g, "''")}'`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What to undo, newest first: the server, PostgreSQL, the temp folders (also on a failure or a signal). */
const cleanups = [async () => fs.rmSync(dir, { recursive: true, force: true })];
async function cleanUp() {
  while (cleanups.length)
    await cleanups
      .pop()()
      .catch((err) => console.error(`cleanup: ${err.message}`));
}
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

/** Runs a program to its end: its output, or a rejection with what it printed. */
function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('error', reject);
    c.on('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${path.basename(cmd)} ${args.join(' ')} exited ${code}: ${err || out}`)),
    );
  });
}

/** PostgreSQL 15's binaries (Debian's postgresql-15, as the tests use), else the newest installed. */
function pgBinDir() {
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(path.join(base, '15', 'bin', 'initdb'))) return path.join(base, '15', 'bin');
  const versions = fs.existsSync(base)
    ? fs.readdirSync(base).filter((v) => /^\d+$/.test(v) && fs.existsSync(path.join(base, v, 'bin', 'initdb')))
    : [];
  if (!versions.length)
    throw new Error('PostgreSQL is not installed: scripts/ensure-system-deps.sh --tests installs it');
  return path.join(base, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/**
 * A private PostgreSQL on 127.0.0.1 at a free port, its cluster in a temp folder (initdb as the
 * `postgres` user when this is root: initdb and the server refuse root), password logins over TCP; a
 * database `quarry_source` owned by the login `quarry_reader`. Stopped and removed by cleanUp().
 */
async function startPostgres() {
  const bin = pgBinDir();
  const root = process.getuid?.() === 0;
  const pgDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-source-pg-'));
  const data = path.join(pgDir, 'data');
  const pgRun = (tool, args) =>
    root
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { cwd: pgDir })
      : run(path.join(bin, tool), args, { cwd: pgDir });
  cleanups.push(async () => {
    if (fs.existsSync(path.join(data, 'postmaster.pid')))
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    fs.rmSync(pgDir, { recursive: true, force: true });
  });
  const adminPassword = `admin-${randomBytes(9).toString('hex')}`;
  const server = {
    host: '127.0.0.1',
    port: await freePort(),
    database: 'quarry_source',
    user: 'quarry_reader',
    password: `pw-${randomBytes(9).toString('hex')}`,
    version: path.basename(path.dirname(bin)),
  };
  const pwfile = path.join(pgDir, 'pwfile');
  fs.writeFileSync(pwfile, `${adminPassword}\n`, { mode: 0o600 });
  if (root) {
    const uid = Number((await run('id', ['-u', 'postgres'])).trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).trim());
    fs.chownSync(pgDir, uid, gid);
    fs.chownSync(pwfile, uid, gid);
  }
  await pgRun('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${pwfile}`,
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
    '--no-instructions',
  ]);
  fs.rmSync(pwfile, { force: true });
  // Durability off only speeds up writing the table; reads are as on any server (shared_buffers default).
  const options = [
    `-p ${server.port}`,
    `-k ${pgDir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
  ].join(' ');
  await pgRun('pg_ctl', ['-D', data, '-l', path.join(pgDir, 'server.log'), '-o', options, '-w', '-t', '90', 'start']);
  server.admin = async (work, database = 'postgres') => {
    const c = new pg.Client({
      host: server.host,
      port: server.port,
      user: 'postgres',
      password: adminPassword,
      database,
    });
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  await server.admin(async (c) => {
    await c.query(`CREATE ROLE ${server.user} LOGIN PASSWORD '${server.password}'`);
    await c.query(`CREATE DATABASE ${server.database} OWNER ${server.user}`);
  });
  return server;
}

/** psql as the reader, on a command line of its own (-X: no ~/.psqlrc). */
function psql(server, command) {
  return run(
    'psql',
    [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      server.host,
      '-p',
      String(server.port),
      '-U',
      server.user,
      '-d',
      server.database,
      '-c',
      command,
    ],
    { env: { ...process.env, PGPASSWORD: server.password } },
  );
}

/** The table `flights`: the rows of flights-3m.parquet (the first ROWS) numbered by `id bigint PRIMARY KEY`, analyzed. */
async function fillPostgres(server) {
  const csv = path.join(dir, 'seed.csv');
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  await c.run(
    `COPY (SELECT row_number() OVER () AS id, * FROM read_parquet(${q(PARQUET)}) LIMIT ${ROWS}) TO ${q(csv)} (HEADER)`,
  );
  c.closeSync();
  inst.closeSync();
  await psql(
    server,
    'CREATE TABLE flights (id bigint NOT NULL, "date" timestamp, delay integer, distance integer, origin text, destination text)',
  );
  await psql(server, `\\copy flights (id, "date", delay, distance, origin, destination) FROM ${q(csv)} CSV HEADER`);
  fs.rmSync(csv, { force: true });
  await psql(server, 'ALTER TABLE flights ADD PRIMARY KEY (id)');
  await psql(server, 'VACUUM ANALYZE flights');
}

/** The plan's first line for the SELECT the PostgreSQL reader sends (postgres-source-reader.adapter.ts). */
async function readPlan(server, after) {
  const casts = [0, 1, 2, 3, 4, 5].map((i) => `q.c${i}::text`).join(', ');
  const where = after === undefined ? 'WHERE q.c0 IS NOT NULL' : `WHERE q.c0 > ${q(after)} AND q.c0 IS NOT NULL`;
  const sql = `SELECT ${casts} FROM (SELECT * FROM "flights") AS q(c0, c1, c2, c3, c4, c5) ${where} ORDER BY q.c0`;
  const plan = await server.admin((c) => c.query(`EXPLAIN ${sql}`), server.database);
  const lines = plan.rows.map((r) => r['QUERY PLAN'].trim());
  const jit = lines.findIndex((l) => l.startsWith('JIT:'));
  return (jit >= 0 ? lines.slice(0, jit) : lines)
    .map((l) => l.replace(/^->\s*/, ''))
    .map((l) => l.replace(/\s+\(cost=.*\)$/, ''))
    .join(' ← ');
}

/** By hand: psql's \copy of the table to a CSV file, then DuckDB's CREATE TABLE AS of it into a database file, closed. */
async function byHand(server, i) {
  const csv = path.join(dir, `hand-${i}.csv`);
  const db = path.join(dir, `hand-${i}.duckdb`);
  const t0 = performance.now();
  await psql(server, `\\copy (SELECT * FROM flights) TO ${q(csv)} CSV HEADER`);
  const t1 = performance.now();
  const inst = await DuckDBInstance.create(db);
  const c = await inst.connect();
  await c.run(`CREATE TABLE flights AS SELECT * FROM read_csv(${q(csv)})`);
  c.closeSync();
  inst.closeSync();
  const t2 = performance.now();
  const mb = fs.statSync(csv).size / 1e6;
  for (const f of [csv, db, `${db}.wal`]) fs.rmSync(f, { force: true });
  return { ms: t2 - t0, copyMs: t1 - t0, duckMs: t2 - t1, mb };
}

const memory = (pid) =>
  processTree(pid).reduce((m, p) => ({ rssMb: m.rssMb + p.rssKb / 1024, pssMb: m.pssMb + p.pssKb / 1024 }), {
    rssMb: 0,
    pssMb: 0,
  });

/**
 * SOURCES.RUN of `sourceId` timed until SOURCES.RUNS answers it done (or failed), with, sampled every
 * 100 ms: the server's memory, whether the ingest service's PostgreSQL session is open (the read), and
 * the staged file's size; and when the server logs the run published.
 */
async function timedRun(ctx, sourceId) {
  const { server, token, pgServer, published } = ctx;
  const staging = path.join(ctx.dataDir, 'ingest', 'staging');
  const before = memory(server.child.pid);
  const peak = { ...before };
  let stagedMb = 0;
  let peakAt = NaN;
  let readSeen;
  let readGone;
  let backendCpuMs = NaN;
  let serverCpuAtReadEndMs = NaN;
  let done = false;
  const watcher = new pg.Client({ ...pgServer.login });
  watcher.on('error', () => undefined);
  await watcher.connect();
  const t0 = performance.now();
  const wall0 = Date.now();
  const serverCpu0 = cpuMsOf(server.child.pid);
  const at = (iso) => (iso ? Date.parse(iso) - wall0 : NaN);
  const { runId } = await rpc(server.port, token, 'SOURCES.RUN', { sourceId });
  // Memory and the staged file every 100 ms (ps is slow); the PostgreSQL session every 20 ms.
  const sampling = (async () => {
    while (!done) {
      const m = memory(server.child.pid);
      if (m.rssMb > peak.rssMb) peakAt = performance.now() - t0;
      peak.rssMb = Math.max(peak.rssMb, m.rssMb);
      peak.pssMb = Math.max(peak.pssMb, m.pssMb);
      try {
        for (const f of fs.readdirSync(staging))
          stagedMb = Math.max(stagedMb, fs.statSync(path.join(staging, f)).size / 1e6);
      } catch {
        // not made yet, or the file removed between the listing and the stat
      }
      await sleep(100);
    }
  })();
  const session = (async () => {
    while (!done) {
      const { rows } = await watcher.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'quarry-ingest'");
      const now = performance.now() - t0;
      if (rows.length > 0) {
        readSeen ??= now;
        // The backend's CPU so far (this bench runs as root or as the server's user: /proc is readable).
        const cpu = cpuMsOf(rows[0].pid);
        if (Number.isFinite(cpu)) backendCpuMs = cpu;
      } else if (readSeen !== undefined && readGone === undefined) {
        readGone = now;
        serverCpuAtReadEndMs = cpuMsOf(server.child.pid);
      }
      await sleep(20);
    }
  })();
  let runInfo;
  try {
    for (;;) {
      const { runs } = await rpc(server.port, token, 'SOURCES.RUNS', { sourceId, limit: 5 });
      runInfo = runs.find((r) => r.runId === runId);
      if (runInfo && (runInfo.state === 'done' || runInfo.state === 'failed')) break;
      await sleep(100);
    }
  } finally {
    done = true;
    await Promise.all([sampling, session].map((p) => p.catch(() => undefined)));
    await watcher.end().catch(() => undefined);
  }
  const ms = performance.now() - t0;
  if (runInfo.state !== 'done') throw new Error(`run ${runId} failed: ${runInfo.error}`);
  const publishedAt = published.get(runId);
  return {
    ms,
    run: runInfo,
    queuedMs: at(runInfo.startedAt),
    readStartMs: readSeen,
    readEndMs: readGone,
    publishedMs: publishedAt === undefined ? NaN : publishedAt.at - t0,
    peakAtMs: peakAt,
    backendCpuMs,
    serverReadCpuMs: serverCpuAtReadEndMs - serverCpu0,
    serverLoadCpuMs: publishedAt === undefined ? NaN : publishedAt.cpuMs - serverCpuAtReadEndMs,
    endedMs: at(runInfo.endedAt),
    stagedMb,
    grewRssMb: Math.max(0, peak.rssMb - before.rssMb),
    grewPssMb: Math.max(0, peak.pssMb - before.pssMb),
    beforeRssMb: before.rssMb,
  };
}

async function total(ctx, index) {
  const r = await rpc(ctx.server.port, ctx.token, 'QUERIES.EXECUTE', { index, query: '*', pageSize: 1 });
  return r.total;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => (Number.isFinite(x) ? `${Math.round(x).toLocaleString('en')} ms` : 'n/a');
const met = (ok) => (ok ? 'met' : 'NOT met');

/** Where a run's time went, from the samples: queued, read into the staged CSV, load + publish, answer seen. */
function phases(r) {
  const read = r.readEndMs - r.queuedMs;
  const load = r.publishedMs - r.readEndMs;
  const s = (x) => (Number.isFinite(x) ? `${(x / 1000).toFixed(1)} s` : 'n/a');
  const peakIn = r.peakAtMs <= r.readEndMs ? 'the read' : r.peakAtMs <= r.publishedMs ? 'the load' : 'after';
  return (
    `queued ${ms(r.queuedMs)}, PostgreSQL → staged CSV ${ms(read)} (${fmt(r.stagedMb)} MB; session open ${ms(r.readStartMs - r.queuedMs)} after the start), staged CSV → published ${ms(load)}, seen done ${ms(r.ms - r.publishedMs)} later\n` +
    `           CPU: during the read the PostgreSQL backend ${s(r.backendCpuMs)}, the server ${s(r.serverReadCpuMs)}; during the load the server ${s(r.serverLoadCpuMs)}; memory peaked at ${ms(r.peakAtMs)} (in ${peakIn})`
  );
}

async function main() {
  const loadAvg = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const pgServer = await startPostgres();
  pgServer.login = {
    host: pgServer.host,
    port: pgServer.port,
    user: pgServer.user,
    password: pgServer.password,
    database: pgServer.database,
  };
  let t = performance.now();
  await fillPostgres(pgServer);
  console.log(
    `PostgreSQL ${pgServer.version} on 127.0.0.1:${pgServer.port}: table flights (${ROWS.toLocaleString('en')} rows) made in ${ms(performance.now() - t)}`,
  );
  console.log(`  full read plan:   ${await readPlan(pgServer)}`);
  console.log(`  append read plan: ${await readPlan(pgServer, String(ROWS))}`);

  const dataDir = path.join(dir, 'data');
  const env = { QUARRY_DATA_DIR: dataDir, QUARRY_TARGET: 'all', QUARRY_SOURCE_ALLOW: '127.0.0.1:*' };
  await cli(['user', 'create', 'bench', '--admin'], env);
  const token = (
    await cli(['token', 'create', '--user', 'bench', '--scopes', 'query:execute,indexes:read,indexes:write'], env)
  )
    .trim()
    .split('\n')
    .pop();
  const server = await startServer(env);
  cleanups.push(
    () =>
      new Promise((resolve) => {
        if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
        const kill = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
        server.child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        server.child.kill('SIGTERM');
      }),
  );
  // The log, line by line: when each run was published (and a copy of the whole log with --logs).
  const published = new Map();
  const logFile = LOGS ? fs.createWriteStream(LOGS) : undefined;
  let partial = '';
  server.child.stdout.on('data', (d) => {
    logFile?.write(d);
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop();
    for (const line of lines)
      if (line.includes('source run published')) {
        const m = /"runId":"([0-9a-f]+)"/.exec(line);
        if (m) published.set(m[1], { at: performance.now(), cpuMs: cpuMsOf(server.child.pid) });
      }
  });
  const ctx = { server, token, pgServer, published, dataDir };

  const source = (i) => ({
    name: `flights-${i}`,
    index: `flights${i}`,
    kind: 'postgres',
    connection: {
      host: pgServer.host,
      port: pgServer.port,
      database: pgServer.database,
      user: pgServer.user,
      password: pgServer.password,
    },
    table: 'flights',
    refresh: { mode: 'append', cursor: 'id' },
  });

  // Warm-up: both sides read the table once from the page cache before anything is timed.
  await psql(pgServer, 'SELECT count(*) FROM flights');

  const hand = [];
  const full = [];
  let last;
  for (let i = 0; i < RUNS; i++) {
    hand.push(await byHand(pgServer, i));
    const { sourceId } = await rpc(server.port, token, 'SOURCES.CREATE', source(i));
    const r = await timedRun(ctx, sourceId);
    if (r.run.rowsRead !== ROWS) throw new Error(`the full run read ${r.run.rowsRead} rows, not ${ROWS}`);
    const n = await total(ctx, `flights${i}`);
    if (n !== ROWS) throw new Error(`flights${i} holds ${n} records, not ${ROWS}`);
    full.push(r);
    last = { sourceId, index: `flights${i}`, cursorMax: r.run.cursorMax };
  }

  // 1 % new rows, past the cursor; the append run of the last source reads only them.
  t = performance.now();
  await psql(
    pgServer,
    `INSERT INTO flights SELECT id + ${ROWS}, "date", delay, distance, origin, destination FROM flights WHERE id <= ${NEW_ROWS}`,
  );
  const insertMs = performance.now() - t;
  const append = await timedRun(ctx, last.sourceId);
  const appended = await total(ctx, last.index);

  const h = median(hand.map((x) => x.ms));
  const f = median(full.map((x) => x.ms));
  const fr = full.find((x) => x.ms === f);
  const hr = hand.find((x) => x.ms === h);
  const grew = Math.max(...full.map((x) => x.grewRssMb));
  const grewPss = Math.max(...full.map((x) => x.grewPssMb));
  console.log(
    `flights in PostgreSQL → a searchable index (${ROWS.toLocaleString('en')} rows, ${RUNS} run${RUNS > 1 ? 's, medians' : ''}):`,
  );
  console.log(`  by hand: psql \\copy to CSV       ${ms(hr.copyMs)}   (${fmt(hr.mb)} MB)`);
  console.log(`           DuckDB CTAS read_csv     ${ms(hr.duckMs)}   (into a database file, closed)`);
  console.log(`           together                 ${ms(h)}`);
  console.log(
    `  Quarry full run (RUN → done)      ${ms(f)}   (rowsRead ${fr.run.rowsRead}, version ${fr.run.version})`,
  );
  console.log(`           ${phases(fr)}`);
  console.log(
    `  server memory during the full run  +${Math.round(grew)} MB RSS, +${Math.round(grewPss)} MB PSS (process tree, ${Math.round(fr.beforeRssMb)} MB RSS before)`,
  );
  console.log(`  ${NEW_ROWS.toLocaleString('en')} new rows inserted in ${ms(insertMs)}`);
  console.log(
    `  Quarry append run (RUN → done)    ${ms(append.ms)}   (rowsRead ${append.run.rowsRead}, cursor ${append.run.cursorAfter} → ${append.run.cursorMax}, version ${append.run.version}, index now ${appended.toLocaleString('en')} records)`,
  );
  console.log(`           ${phases(append)}`);
  console.log(`           server memory +${Math.round(append.grewRssMb)} MB RSS`);
  const onlyNew = append.run.rowsRead === NEW_ROWS && appended === ROWS + NEW_ROWS;
  console.log(
    `  ratios: full / by hand ${(f / h).toFixed(2)}× (target ≤ 1.5×: ${met(f / h <= 1.5)}), ` +
      `append / full ${(append.ms / f).toFixed(3)}× (target ≤ 0.1×: ${met(append.ms / f <= 0.1)}), ` +
      `memory +${Math.round(grew)} MB (target ≤ +400 MB: ${met(grew <= 400)}), ` +
      `append read only the new rows: ${onlyNew ? 'yes' : `NO (rowsRead ${append.run.rowsRead}, ${appended} records)`}`,
  );
  console.log(`cores: ${os.cpus().length}; node ${process.version}; load average at start ${loadAvg}`);
  logFile?.end();
}

main().then(cleanUp, async (err) => {
  console.error(err);
  await cleanUp();
  process.exitCode = 1;
});

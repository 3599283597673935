#!/usr/bin/env node
// Where the in-memory search stops paying (issue 18): the same searches through the query service's
// in-memory path and through its SQL path (one statement up to 100,000 records, count and page beyond),
// in-process, on indexes from 3,201 to 300,000 records: movies (7 text fields) repeated, and the first
// rows of flights-3m (2 single-word text fields). Also what holding a version costs: the time to read
// its records and then every column into memory (both in the background while SQL answers), and the
// bytes it holds. The worst query the language allows (1,024 clauses) shows how
// long one search can hold the thread.
// Usage: npm run build && node bench/in-memory-search.bench.js [--runs 30]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { DuckDBInstance } = require('@duckdb/node-api');
const { VEGA, ROOT, timeIt, fmt } = require('./lib');

const dist = (p) => require(path.join(ROOT, p));
const { buildSnapshot, SnapshotEngine } = dist('packages/snapshots/dist');
const { parseQuery } = dist('packages/query-language/dist');
const { DuckDbSearchIndex } = dist('services/query/dist/duckdb');
const { InMemoryTable } = dist('services/query/dist/adapters/memory/in-memory-table');
const { searchInMemory } = dist('services/query/dist/adapters/memory/in-memory-search');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 30;

const MOVIES_QUERIES = [
  { name: 'word, any field', q: 'love', limit: 20 },
  {
    name: 'field word, sorted',
    q: '(Major Genre):Drama',
    sort: [{ field: 'IMDB Rating', type: 'number', direction: 'desc' }],
    limit: 50,
  },
  { name: 'prefix OR range', q: 'star* OR (IMDB Rating):[8 TO 10]', limit: 50 },
  { name: 'phrase AND NOT', q: '"the lord" AND NOT Director:jackson', limit: 20 },
];
const FLIGHTS_QUERIES = [
  { name: 'origin:SFO', q: 'origin:SFO', limit: 50 },
  {
    name: 'range, sorted',
    q: 'delay:[60 TO 120]',
    sort: [{ field: 'distance', type: 'integer', direction: 'desc' }],
    limit: 50,
  },
  { name: 'word, any field', q: 'ORD', limit: 50 },
  { name: '*, sorted', q: '*', sort: [{ field: 'delay', type: 'integer', direction: 'desc' }], limit: 100 },
];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-mem-'));
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const sources = [];
  for (const times of [1, 10, 31]) {
    const file = path.join(dir, `movies-x${times}.parquet`);
    await c.run(
      `COPY (SELECT m.* FROM range(${times}) r, read_json_auto('${path.join(VEGA, 'movies.json')}') m ORDER BY r.range) TO '${file}'`,
    );
    sources.push({ name: `movies-x${times}`, file, queries: MOVIES_QUERIES });
  }
  for (const n of [10_000, 100_000, 300_000]) {
    const file = path.join(dir, `flights-${n}.parquet`);
    await c.run(
      `COPY (SELECT * FROM read_parquet('${path.join(VEGA, 'flights-3m.parquet')}') LIMIT ${n}) TO '${file}'`,
    );
    sources.push({ name: `flights-${n / 1000}k`, file, queries: FLIGHTS_QUERIES });
  }
  c.closeSync();
  db.closeSync();

  const engine = new SnapshotEngine(dir);
  const sql = new DuckDbSearchIndex(engine, { inMemoryMaxRecords: 0 });
  const rows = [];
  const holding = [];
  for (const s of sources) {
    const built = await buildSnapshot({
      name: s.name.replace(/[^a-z0-9-]/gi, '-'),
      file: s.file,
      dataDir: dir,
      types: {},
      views: [],
    });
    const entry = {
      name: s.name,
      description: '',
      fields: built.fields,
      views: [],
      recordCount: built.recordCount,
      version: 1,
      snapshot: built.snapshot,
      updatedAt: '',
    };
    await engine.table(entry);
    // Reading happens while the thread serves other calls: the longest it holds the thread matters.
    const stalls = monitorEventLoopDelay({ resolution: 1 });
    stalls.enable();
    const t0 = process.hrtime.bigint();
    const table = await InMemoryTable.load(engine, entry);
    const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const t1 = process.hrtime.bigint();
    await table.readColumns(built.fields.map((f) => f.name));
    const columnsMs = Number(process.hrtime.bigint() - t1) / 1e6;
    stalls.disable();
    const longestStall = stalls.max / 1e6;
    for (const q of s.queries) {
      const plan = {
        where: parseQuery(q.q, { fields: built.fields, now: Date.now() }),
        sort: q.sort ?? [],
        offset: 0,
        limit: q.limit,
      };
      for (let i = 0; i < 5; i++) {
        searchInMemory(table, plan);
        await sql.search(entry, plan);
      }
      const a = searchInMemory(table, plan);
      const b = await sql.search(entry, plan);
      if (a.total !== b.total || a.recordsJson !== b.recordsJson)
        throw new Error(`${s.name} ${q.q}: the paths disagree`);
      const mem = await timeIt(RUNS, async () => searchInMemory(table, plan));
      const viaSql = await timeIt(RUNS, () => sql.search(entry, plan));
      rows.push({
        index: s.name,
        records: built.recordCount,
        query: q.name,
        total: a.total,
        'memory p50 ms': fmt(mem.p50),
        'SQL p50 ms': fmt(viaSql.p50),
        'memory / SQL': fmt(mem.p50 / viaSql.p50),
      });
    }
    // Word indexes are built on first use: the queries above built those they need.
    const worst = parseQuery(
      Array.from({ length: 1024 }, (_, i) =>
        s.queries === MOVIES_QUERIES ? `(IMDB Rating):>${i / 100}` : `delay:>${i}`,
      ).join(' OR '),
      { fields: built.fields, now: Date.now() },
    );
    const worstMs = (
      await timeIt(3, async () => searchInMemory(table, { where: worst, sort: [], offset: 0, limit: 20 }))
    ).p50;
    holding.push({
      index: s.name,
      records: built.recordCount,
      'records read ms': fmt(loadMs),
      'every column read ms': fmt(columnsMs),
      'longest stall ms': fmt(longestStall),
      'held MB (estimate)': fmt(table.approxBytes() / 2 ** 20),
      'process heap MB': fmt(process.memoryUsage().heapUsed / 2 ** 20),
      '1,024-clause search ms': fmt(worstMs),
    });
    engine.release(s.name);
  }
  console.table(rows);
  console.table(holding);
  console.log(`${RUNS} runs each, in-process; cores: ${os.cpus().length}; node ${process.version}`);
  await engine.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

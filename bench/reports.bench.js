#!/usr/bin/env node
// Saved reports on SQLite: saves/s (store level with FULL sync, and end to end through
// QUERIES.EXECUTE + saveReport), then REPORTS.FIND p50/p95 with 100,000 stored reports.
// Usage: npm run build && node bench/reports.bench.js
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { sqliteFile } = require('../packages/metadata-store/dist');
const { SqliteReportStore } = require('../services/reports/dist/sqlite');
const { VEGA, cli, startServer, rpc, timeIt, fmt } = require('./lib');

const TOTAL = 100_000;
const WORDS = [
  'revenue',
  'delay',
  'drama',
  'comedy',
  'quarterly',
  'regional',
  'summary',
  'airport',
  'budget',
  'forecast',
];

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-r-'));
  const env = { QUARRY_DATA_DIR: dataDir };
  await cli(['index', 'load', 'flights', path.join(VEGA, 'flights-2k.json')], env);
  await cli(['user', 'create', 'bench', '--indexes', '*'], env);
  const token = (
    await cli(['token', 'create', '--user', 'bench', '--scopes', 'query:execute,reports:read,reports:write'], env)
  )
    .trim()
    .split('\n')
    .pop();

  // Seed 100,000 reports through the store, timing the first 5,000 one durable insert at a time.
  const store = new SqliteReportStore(sqliteFile(dataDir));
  let t = process.hrtime.bigint();
  for (let i = 0; i < TOTAL; i++) {
    if (i === 5000) {
      const secs = Number(process.hrtime.bigint() - t) / 1e9;
      console.log(`store inserts (synchronous=FULL, one transaction each): ${Math.round(5000 / secs)}/s`);
    }
    await store.insert({
      ownerId: i % 10 === 0 ? 'someone-else' : 'seed-owner',
      ownerName: 'seed',
      name: `Report ${i} ${WORDS[i % WORDS.length]}`,
      description: `${WORDS[(i * 7) % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]} analysis`,
      folder: '',
      shared: i % 3 === 0,
      type: i % 2 ? 'query' : 'crosstab',
      index: 'flights',
      method: i % 2 ? 'QUERIES.EXECUTE' : 'CROSSTAB.EXECUTE',
      params: '{"index":"flights"}',
    });
  }
  await store.close();

  const server = await startServer(env);
  // End-to-end saves: execute + save, 8 in flight.
  let n = 0;
  t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; i < 150; i++) {
        await rpc(server.port, token, 'QUERIES.EXECUTE', {
          index: 'flights',
          pageSize: 1,
          saveReport: { name: `e2e ${w}-${i}` },
        });
        n++;
      }
    }),
  );
  const e2eSaves = n / (Number(process.hrtime.bigint() - t) / 1e9);

  const cases = [
    { name: 'first page, no filter', params: {} },
    { name: 'word search "drama"', params: { search: 'drama' } },
    { name: 'two words, crosstabs only', params: { search: 'regional budget', types: ['crosstab'] } },
    { name: 'page 50 via cursor (limit 20)', params: { limit: 20 }, deep: 50 },
  ];
  const rows = [];
  for (const c of cases) {
    let params = c.params;
    if (c.deep) {
      let cursor;
      for (let i = 0; i < c.deep; i++)
        cursor = (await rpc(server.port, token, 'REPORTS.FIND', { ...c.params, ...(cursor ? { cursor } : {}) }))
          .nextCursor;
      params = { ...c.params, cursor };
    }
    for (let i = 0; i < 5; i++) await rpc(server.port, token, 'REPORTS.FIND', params);
    const r = await timeIt(50, () => rpc(server.port, token, 'REPORTS.FIND', params));
    rows.push({ find: c.name, 'p50 ms': fmt(r.p50), 'p95 ms': fmt(r.p95) });
  }
  await server.stop();
  console.log(`end-to-end saves (QUERIES.EXECUTE + saveReport, 8 concurrent): ${Math.round(e2eSaves)}/s`);
  console.log(`REPORTS.FIND with ${TOTAL.toLocaleString('en')} stored reports (user sees its own and shared ones):`);
  console.table(rows);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

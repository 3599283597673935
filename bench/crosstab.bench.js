#!/usr/bin/env node
// Crosstab benchmark on flights-3m.parquet: end-to-end CROSSTAB.EXECUTE (HTTP, auth, gRPC, HTML) beside
// the same pivot queries run in-process on DuckDB (no HTTP, no gRPC, no HTML), in one run.
// Usage: npm run build && node bench/crosstab.bench.js [--runs 20]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SqliteMetadataStore, sqliteFile } = require('../packages/metadata-store/dist');
const { SnapshotEngine } = require('../packages/snapshots/dist');
const { parseQuery } = require('../packages/query-language/dist');
const { DuckDbPivotEngine } = require('../services/crosstab/dist/adapters/duckdb-pivot-engine.adapter');
const { crosstabSpec } = require('../services/crosstab/dist/domain/crosstab-spec');
const { VEGA, cli, startServer, rpc, timeIt, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 20;
const FIVE = '(ATL OR ORD OR DFW OR LAX OR PHX)';
const CASES = [
  {
    name: 'origin x month: Sum(delay), Count, distinct destinations',
    params: { query: '*', rows: ['origin'], columns: [{ field: 'date' }], totals: [{ aggregationType: 'Sum', field: 'delay' }, { aggregationType: 'Count' }, { aggregationType: 'Count', dynamicView: 'Destinations' }] },
  },
  {
    name: 'same, text filter "LAX"',
    params: { query: 'LAX', rows: ['origin'], columns: [{ field: 'date' }], totals: [{ aggregationType: 'Sum', field: 'delay' }, { aggregationType: 'Count' }, { aggregationType: 'Count', dynamicView: 'Destinations' }] },
  },
  {
    name: '2x2 levels: origin/destination x month/distance',
    params: {
      query: `origin:${FIVE} AND destination:${FIVE}`,
      rows: ['origin', 'destination'],
      columns: [{ field: 'date' }, { field: 'distance', reverse: true }],
      totals: [{ aggregationType: 'Average', field: 'delay' }, { aggregationType: 'Count' }],
    },
  },
];

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-x-'));
  const env = { QUARRY_DATA_DIR: dataDir };
  await cli(['index', 'load', 'flights', path.join(VEGA, 'flights-3m.parquet'), '--type', 'date=date:month', '--view', 'Destinations=destination'], env);
  await cli(['user', 'create', 'bench', '--indexes', '*'], env);
  const token = (await cli(['token', 'create', '--user', 'bench', '--scopes', 'query:execute'], env)).trim().split('\n').pop();

  const store = new SqliteMetadataStore(sqliteFile(dataDir));
  const entry = await store.getIndex('flights');
  const engine = new SnapshotEngine(dataDir);
  const pivots = new DuckDbPivotEngine(engine);
  const server = await startServer(env);

  const rows = [];
  for (const c of CASES) {
    const params = { index: 'flights', ...c.params };
    const input = {
      rows: c.params.rows,
      columns: (c.params.columns ?? []).map((x) => ({ field: x.field, reverse: x.reverse ?? false })),
      totals: c.params.totals.map((t) => ({ aggregationType: t.aggregationType, field: t.field ?? '', dynamicView: t.dynamicView ?? '', name: '' })),
    };
    const spec = crosstabSpec(entry, input);
    const where = parseQuery(c.params.query, { fields: entry.fields, now: Date.now() });
    const direct = async () => {
      await pivots.distinctKeys(entry, where, spec);
      return pivots.aggregate(entry, where, spec);
    };
    const first = await rpc(server.port, token, 'CROSSTAB.EXECUTE', params);
    for (let i = 0; i < 5; i++) {
      await rpc(server.port, token, 'CROSSTAB.EXECUTE', params);
      await direct();
    }
    const e2e = await timeIt(RUNS, () => rpc(server.port, token, 'CROSSTAB.EXECUTE', params));
    const duck = await timeIt(RUNS, direct);
    rows.push({
      crosstab: c.name,
      'rows x cols': `${first.rowCount} x ${first.columnCount}`,
      'e2e p50 ms': fmt(e2e.p50),
      'e2e p95 ms': fmt(e2e.p95),
      'duckdb p50 ms': fmt(duck.p50),
      'ratio p50': fmt(e2e.p50 / duck.p50),
      'target (1.3x+5) ms': fmt(duck.p50 * 1.3 + 5),
      ok: e2e.p50 <= duck.p50 * 1.3 + 5 ? 'yes' : 'NO',
    });
  }
  await server.stop();
  await engine.close();
  await store.close();
  console.table(rows);
  console.log(`${RUNS} sequential runs each over 3,000,000 flights; cores: ${os.cpus().length}; node ${process.version}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

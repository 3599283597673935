#!/usr/bin/env node
// Period comparison on flights-3m.parquet: the same CROSSTAB.EXECUTE with and without compared totals
// (each compared total beside the plain one), end to end, measured in turns in one run. The target is a
// comparison costing at most 2x the crosstab without it.
// Usage: npm run build && node bench/crosstab-compare.bench.js [--runs 15]
const os = require('node:os');
const path = require('node:path');
const { VEGA, benchData, startServer, rpc, timePair, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 15;
const month = { field: 'date', dateGroup: 'month' };
const compared = (totals, compare) => [...totals, ...totals.map((t) => ({ ...t, compare }))];
const CASES = [
  {
    name: 'month: Sum(delay), Count vs previous month (difference)',
    params: { rows: [month] },
    totals: [{ aggregationType: 'Sum', field: 'delay' }, { aggregationType: 'Count' }],
    compare: { to: 'previousPeriod', as: 'difference' },
  },
  {
    name: 'origin x month: Sum(delay), CountDistinct(destination) vs same month last year',
    params: { rows: ['origin'], columns: [month] },
    totals: [
      { aggregationType: 'Sum', field: 'delay' },
      { aggregationType: 'CountDistinct', field: 'destination' },
    ],
    compare: { to: 'previousYear', as: 'percentDifference' },
  },
  {
    name: 'top 10 origins x month: Median(delay) vs previous month',
    params: {
      rows: ['origin'],
      columns: [month],
      rowOrder: { by: 'value', measure: 0, direction: 'desc' },
      rowLimit: 10,
    },
    totals: [{ aggregationType: 'Median', field: 'delay' }],
    compare: { to: 'previousPeriod' },
  },
  {
    name: 'week (Europe/Paris): Average(delay) vs previous week',
    params: { rows: [{ field: 'date', dateGroup: 'week' }], timeZone: 'Europe/Paris' },
    totals: [{ aggregationType: 'Average', field: 'delay' }],
    compare: { to: 'previousPeriod', as: 'difference' },
  },
];

async function main() {
  const file = path.join(VEGA, 'flights-3m.parquet');
  const { env, token } = await benchData('x', [
    ['flights', file, '--type', 'date=date:month', '--view', 'Destinations=destination'],
  ]);
  const server = await startServer(env);
  const rows = [];
  try {
    for (const c of CASES) {
      const base = { index: 'flights', cache: false, format: 'json', ...c.params };
      const plain = { ...base, totals: c.totals };
      const withCompare = { ...base, totals: compared(c.totals, c.compare) };
      const first = await rpc(server.port, token, 'CROSSTAB.EXECUTE', withCompare);
      for (let i = 0; i < 3; i++) {
        await rpc(server.port, token, 'CROSSTAB.EXECUTE', plain);
        await rpc(server.port, token, 'CROSSTAB.EXECUTE', withCompare);
      }
      const { a, b } = await timePair(
        RUNS,
        () => rpc(server.port, token, 'CROSSTAB.EXECUTE', plain),
        () => rpc(server.port, token, 'CROSSTAB.EXECUTE', withCompare),
      );
      rows.push({
        crosstab: c.name,
        'rows x cols': `${first.rowCount} x ${first.columnCount}`,
        'plain p50 ms': fmt(a.p50),
        'compared p50 ms': fmt(b.p50),
        'ratio p50': fmt(b.p50 / a.p50),
        'compared p95 ms': fmt(b.p95),
        'ok (<= 2x)': b.p50 <= 2 * a.p50 ? 'yes' : 'NO',
      });
    }
  } finally {
    await server.stop();
  }
  console.table(rows);
  console.log(
    `${RUNS} runs each, plain and compared in turns, over 3,000,000 flights; cores: ${os.cpus().length}; node ${process.version}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

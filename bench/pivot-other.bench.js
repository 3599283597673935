#!/usr/bin/env node
// "Other (N)" and the new showAs modes on flights-3m.parquet: end-to-end CROSSTAB.EXECUTE (HTTP, auth,
// gRPC, JSON) of a top-N crosstab with otherRow beside the same crosstab without it, in one run, taking
// turns (target: at most 1.3x); the Other row checked once against the same answer written by hand on
// DuckDB. Ranks and moving averages are computed from the cells already read: beside plain values.
// Usage: npm run build && node bench/pivot-other.bench.js [--runs 20]
const { flightsCrosstabBench, timePair, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 20;
const TOP = { rowOrder: { by: 'value', measure: 0, direction: 'desc' }, rowLimit: 10 };

const CASES = [
  {
    name: 'top 10 origins x month: Count, Sum(delay)',
    params: {
      rows: ['origin'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      totals: [{ aggregationType: 'Count' }, { aggregationType: 'Sum', field: 'delay' }],
      ...TOP,
    },
    with: { otherRow: true },
    target: 1.3,
  },
  {
    name: 'top 10 origins x month: Count, Median(delay), CountDistinct(destination)',
    params: {
      rows: ['origin'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      totals: [
        { aggregationType: 'Count' },
        { aggregationType: 'Median', field: 'delay' },
        { aggregationType: 'CountDistinct', field: 'destination' },
      ],
      ...TOP,
    },
    with: { otherRow: true },
    target: 1.3,
  },
  {
    name: 'origin x month: Sum(delay) as rankInColumn and movingAverage (vs value)',
    params: {
      rows: ['origin'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      totals: [
        { aggregationType: 'Sum', field: 'delay' },
        { aggregationType: 'Sum', field: 'delay' },
      ],
    },
    with: {
      totals: [
        { aggregationType: 'Sum', field: 'delay', showAs: 'rankInColumn' },
        { aggregationType: 'Sum', field: 'delay', showAs: 'movingAverage', window: 3 },
      ],
    },
    target: 1.3,
  },
];

async function main() {
  const { call, hand, close } = await flightsCrosstabBench('other');

  // The Other row once against DuckDB: its count and its median over the origins not kept.
  const checked = await call({ ...CASES[1].params, otherRow: true });
  const other = checked.data.rows[checked.data.rows.length - 1];
  const kept = checked.data.rows.slice(0, -1).map((r) => `'${String(r.key[0]).replace(/'/g, "''")}'`);
  const [want] = await hand(
    `SELECT count(*) AS n, quantile_cont(delay, 0.5) AS m, count(DISTINCT destination) AS d FROM flights WHERE origin NOT IN (${kept.join(', ')}) OR origin IS NULL`,
  );
  const same = (a, b) => Math.abs(a - Number(b)) <= 1e-9 * Math.max(1, Math.abs(a));
  if (!other.other || !same(other.total[0], want.n) || !same(other.total[1], want.m) || !same(other.total[2], want.d))
    throw new Error(`Other row ${JSON.stringify(other.total)} vs hand-written ${JSON.stringify(want)}`);

  const rows = [];
  for (const c of CASES) {
    const withIt = { ...c.params, ...c.with };
    for (let i = 0; i < 3; i++) {
      await call(c.params);
      await call(withIt);
    }
    const { a: without, b: within } = await timePair(
      RUNS,
      () => call(c.params),
      () => call(withIt),
    );
    const ratio = within.p50 / without.p50;
    rows.push({
      crosstab: c.name,
      'without p50 ms': fmt(without.p50),
      'with p50 ms': fmt(within.p50),
      'ratio p50': fmt(ratio),
      target: `${c.target}x`,
      ok: ratio <= c.target ? 'yes' : 'NO',
    });
  }
  console.table(rows);
  await close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

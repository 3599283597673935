#!/usr/bin/env node
// Crosstab analytics on flights-3m.parquet (issue 25): end-to-end CROSSTAB.EXECUTE (HTTP, auth, gRPC,
// JSON) beside the same answer written by hand on DuckDB over the same data, in one run: a month date
// group against date_trunc, a median against quantile_cont (each with its totals, as GROUPING SETS, as a
// user wanting the table would write it), and a calculated total against the same crosstab without it
// (a formula must cost no second scan).
// Usage: npm run build && node bench/crosstab-analytics.bench.js [--runs 20]
const { flightsCrosstabBench, timePair, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 20;

const CASES = [
  {
    name: 'origin x month of date (dateGroup): Sum(delay), Count',
    params: {
      rows: ['origin'],
      columns: [{ field: 'date', dateGroup: 'month' }],
      totals: [{ aggregationType: 'Sum', field: 'delay' }, { aggregationType: 'Count' }],
    },
    hand: `SELECT origin, date_trunc('month', "date") AS month, sum(delay), count(*) FROM flights GROUP BY GROUPING SETS ((origin, month), (origin), (month), ())`,
    target: (hand) => ({ ms: hand + 5, says: '1.0x+5' }),
  },
  {
    name: 'origin: Median(delay)',
    params: { rows: ['origin'], totals: [{ aggregationType: 'Median', field: 'delay' }] },
    hand: `SELECT origin, quantile_cont(delay, 0.5) FROM flights GROUP BY GROUPING SETS ((origin), ())`,
    target: (hand) => ({ ms: hand * 1.2, says: '1.2x' }),
  },
];

async function main() {
  const { call, hand, close } = await flightsCrosstabBench('xa');

  const rows = [];
  for (const c of CASES) {
    const first = await call(c.params);
    const groups = await hand(c.hand);
    // The same answer both ways: as many row keys, and the same grand total of the first measure.
    const handRows = groups.filter((g) => g.origin !== null && Object.values(g)[1] === null).length;
    const grand = groups.find((g) =>
      Object.values(g)
        .slice(0, -c.params.totals.length)
        .every((v) => v === null),
    );
    const handGrand = Number(Object.values(grand)[Object.keys(grand).length - c.params.totals.length]);
    if (c.params.columns === undefined && first.rowCount !== groups.length - 1)
      throw new Error(`${c.name}: ${first.rowCount} rows vs hand-written ${groups.length - 1}`);
    if (c.params.columns !== undefined && first.rowCount !== handRows)
      throw new Error(`${c.name}: ${first.rowCount} rows vs hand-written ${handRows}`);
    if (Math.abs(first.data.grandTotal[0] - handGrand) > 1e-6 * Math.abs(handGrand))
      throw new Error(`${c.name}: grand total ${first.data.grandTotal[0]} vs hand-written ${handGrand}`);
    for (let i = 0; i < 3; i++) {
      await call(c.params);
      await hand(c.hand);
    }
    const { a: e2e, b: direct } = await timePair(
      RUNS,
      () => call(c.params),
      () => hand(c.hand),
    );
    const target = c.target(direct.p50);
    rows.push({
      crosstab: c.name,
      rows: first.rowCount,
      'e2e p50 ms': fmt(e2e.p50),
      'hand-written p50 ms': fmt(direct.p50),
      'ratio p50': fmt(e2e.p50 / direct.p50),
      target: `${target.says} = ${fmt(target.ms)} ms`,
      ok: e2e.p50 <= target.ms ? 'yes' : 'NO',
    });
  }
  // A calculated total reads the totals it names at each place: no second scan, so (almost) no cost.
  const plain = {
    rows: ['origin'],
    columns: [{ field: 'date', dateGroup: 'month' }],
    totals: [
      { name: 'Delay', aggregationType: 'Sum', field: 'delay' },
      { name: 'Flights', aggregationType: 'Count' },
    ],
  };
  const withFormula = { ...plain, totals: [...plain.totals, { name: 'Per flight', formula: '[Delay] / [Flights]' }] };
  for (let i = 0; i < 3; i++) await call(withFormula);
  const { a: without, b: withIt } = await timePair(
    RUNS,
    () => call(plain),
    () => call(withFormula),
  );
  rows.push({
    crosstab: 'same as the first, plus [Delay] / [Flights] (vs without it)',
    rows: '',
    'e2e p50 ms': fmt(withIt.p50),
    'hand-written p50 ms': `${fmt(without.p50)} (without)`,
    'ratio p50': fmt(withIt.p50 / without.p50),
    target: 'no second scan (< 1.5x)',
    ok: withIt.p50 < without.p50 * 1.5 ? 'yes' : 'NO',
  });
  console.table(rows);
  await close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

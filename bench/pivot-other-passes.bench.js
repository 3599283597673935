#!/usr/bin/env node
// Where the time of "top 10 origins x month: Count, Median(delay), CountDistinct(destination)" goes, by
// statement, on flights-3m.parquet in DuckDB (2 threads): the statements a limited crosstab with an Other
// row made before the folded pass (choose the kept origins, their cells, every month's total down every
// row, the Other row over the records not kept) and the folded pass that replaces the last three, each
// written by hand as the crosstab service writes it, in turns, medians of the runs.
// Usage: node bench/pivot-other-passes.bench.js [--runs 7]
const path = require('node:path');
const { VEGA, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 7;

async function main() {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const c = await db.connect();
  const file = path.join(VEGA, 'flights-3m.parquet').replace(/'/g, "''");
  await c.run(`CREATE TABLE f AS SELECT * FROM read_parquet('${file}')`);
  const top = (await c.runAndReadAll(`SELECT origin FROM f GROUP BY 1 ORDER BY count(*) DESC LIMIT 10`))
    .getRowObjectsJS()
    .map((r) => `'${r.origin}'`);
  const kept = `list_contains([${top.join(', ')}], nullif(origin, ''))`;
  const totals = `count(*), quantile_cont(delay, 0.5), count(DISTINCT nullif(destination, ''))`;
  const month = `date_trunc('month', date)`;
  const statements = {
    'choose the kept origins (every record)': `SELECT nullif(origin, '') o, ${totals} FROM f GROUP BY GROUPING SETS ((o), ())`,
    'kept cells (kept records)': `SELECT nullif(origin, '') o, ${month} m, ${totals} FROM f WHERE ${kept} GROUP BY GROUPING SETS ((o, m), (o), (m), ())`,
    'each month down every row (every record)': `SELECT ${month} m, ${totals} FROM f GROUP BY GROUPING SETS ((m), ())`,
    'the Other row (records not kept)': `SELECT ${month} m, ${totals} FROM f WHERE NOT coalesce(${kept}, false) GROUP BY GROUPING SETS ((m), ())`,
    'folded: all of the three above (every record)': `SELECT o, m, ${totals} FROM (SELECT x, CASE WHEN x THEN NULL ELSE nullif(origin, '') END AS o, ${month} AS m, delay, destination FROM (SELECT *, NOT coalesce(${kept}, false) AS x FROM f)) GROUP BY GROUPING SETS ((x, o, m), (x, o), (m), ())`,
  };
  const [share] = (
    await c.runAndReadAll(`SELECT avg(CASE WHEN ${kept} THEN 1 ELSE 0 END) AS k FROM f`)
  ).getRowObjectsJS();
  const times = {};
  for (let run = 0; run < RUNS; run++)
    for (const [name, sql] of Object.entries(statements)) {
      const t = performance.now();
      await c.runAndReadAll(sql);
      (times[name] ??= []).push(performance.now() - t);
    }
  const p50 = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  console.log(`kept origins hold ${fmt(share.k * 100)}% of the records`);
  console.table(Object.entries(times).map(([statement, v]) => ({ statement, 'p50 ms': fmt(p50(v)) })));
  const [choose, cells, down, other, folded] = Object.values(times).map(p50);
  console.table([
    { crosstab: 'without the Other row', 'ms (sum of p50)': fmt(choose + cells + down) },
    {
      crosstab: 'with it, before (4 statements)',
      'ms (sum of p50)': fmt(choose + cells + down + other),
      ratio: fmt((choose + cells + down + other) / (choose + cells + down)),
    },
    {
      crosstab: 'with it, folded (2 statements)',
      'ms (sum of p50)': fmt(choose + folded),
      ratio: fmt((choose + folded) / (choose + cells + down)),
    },
  ]);
  c.closeSync();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

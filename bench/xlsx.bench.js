#!/usr/bin/env node
// XLSX rendering: a 10,000-cell crosstab table (100 rows x 50 columns x 2 totals, subtotals on both
// axes) rendered by the crosstab service's own renderers, the workbook beside the HTML and CSV of the
// same table in one run. Target (issue #25): the XLSX under 1 s. In process, no server: what is timed
// is the rendering alone (the pivot itself is crosstab.bench.js's).
// Usage: npm run build && node bench/xlsx.bench.js [--runs 10]
const path = require('node:path');
const { timeIt, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 10;
const DOMAIN = path.join(__dirname, '..', 'services', 'crosstab', 'dist', 'domain');
const { buildPivotTable } = require(path.join(DOMAIN, 'pivot-table.js'));
const { pivotLevels } = require(path.join(DOMAIN, 'crosstab-spec.js'));
const { renderXlsx } = require(path.join(DOMAIN, 'render-xlsx.js'));
const { renderHtml } = require(path.join(DOMAIN, 'render-html.js'));
const { renderCsv } = require(path.join(DOMAIN, 'render-csv.js'));

// Two row levels (10 x 10) and two column levels (5 x 10): 100 x 50 leaf cells x 2 totals = 10,000.
const axis = (name) => ({ field: { name, type: 'string' }, reverse: false, keyType: 'string', name });
const spec = {
  rows: [axis('region'), axis('city')],
  columns: [axis('year'), axis('product')],
  totals: [
    { aggregation: 'Sum', field: { name: 'amount', type: 'number' }, name: 'Sum (amount)', showAs: 'value' },
    { aggregation: 'Count', name: 'Count', showAs: 'percentOfGrandTotal' },
  ],
  formulaOrder: [],
  timeZone: 'UTC',
  rowFilter: null,
  columnFilter: null,
  subtotals: true,
  rowOrder: { by: 'label', measure: 0, direction: 'asc' },
  columnOrder: { by: 'label', measure: 0, direction: 'asc' },
  rowLimit: null,
  columnLimit: null,
};

/** One record per leaf cell; groups summed naively at every level the pivot computes. */
function groups() {
  const records = [];
  for (let r = 0; r < 10; r++)
    for (let c = 0; c < 10; c++)
      for (let y = 0; y < 5; y++)
        for (let p = 0; p < 10; p++)
          records.push({
            k: [`R${r}`, `R${r}-C${c}`, `${2020 + y}`, `P${p}`],
            amount: 1234.56 * (r + 1) + c * 7.5 + y * p,
          });
  const out = new Map();
  for (const [rd, cd] of pivotLevels(spec)) {
    for (const rec of records) {
      const rowKey = rec.k.slice(0, rd);
      const columnKey = rec.k.slice(2, 2 + cd);
      const id = JSON.stringify([rowKey, columnKey]);
      const g = out.get(id) ?? { rowKey, columnKey, values: [0, 0] };
      g.values[0] += rec.amount;
      g.values[1] += 1;
      out.set(id, g);
    }
  }
  return [...out.values()];
}

async function main() {
  const table = buildPivotTable(spec, groups());
  const leafCells =
    table.rows.filter((k) => k.length === 2).length * table.columns.filter((k) => k.length === 2).length * 2;
  const shown = table.rows.length * (table.columns.length + 1) * 2;
  console.log(`table: ${table.rows.length} rows x ${table.columns.length + 1} columns x 2 totals`);
  console.log(`       ${leafCells} leaf cells, ${shown} cells with subtotals and totals`);
  const bytes = (await renderXlsx(table, 'bench')).length;
  const xlsx = await timeIt(RUNS, () => renderXlsx(table, 'bench'));
  const html = await timeIt(RUNS, () => renderHtml(table));
  const csv = await timeIt(RUNS, () => renderCsv(table));
  console.log(`xlsx: p50 ${fmt(xlsx.p50)} ms, p95 ${fmt(xlsx.p95)} ms (${bytes} bytes); target < 1000 ms`);
  console.log(`html: p50 ${fmt(html.p50)} ms, p95 ${fmt(html.p95)} ms`);
  console.log(`csv:  p50 ${fmt(csv.p50)} ms, p95 ${fmt(csv.p95)} ms`);
  console.log(xlsx.p50 < 1000 ? 'xlsx under 1 s: yes' : 'xlsx under 1 s: NO');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

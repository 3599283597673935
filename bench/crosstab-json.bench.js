#!/usr/bin/env node
// A large crosstab as JSON against the same table as CSV: hourly rows for a whole year (a generated index
// of one record every 10 minutes, 8,760 hours) and for flights-3m's half year, each total once plain and
// once compared with the previous period, CROSSTAB.EXECUTE end to end (cache off), the two formats in
// turns in one run. The target is JSON within 1.5x of CSV for the same table.
// Usage: npm run build && node bench/crosstab-json.bench.js [--runs 9]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { VEGA, benchData, startServer, rpc, timePair, fmt } = require('./lib');

const RUNS = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 9;
const hour = { field: 'time', dateGroup: 'hour' };
const compare = { to: 'previousPeriod', as: 'difference' };

/** One record every 10 minutes through 2025, an amount and a category each, as CSV. */
function writeYear(file) {
  const start = Date.UTC(2025, 0, 1);
  const lines = ['time,amount,category'];
  for (let t = start, i = 0; t < Date.UTC(2026, 0, 1); t += 600_000, i++) {
    lines.push(`${new Date(t).toISOString()},${(i * 37) % 1000},${'abcde'[i % 5]}`);
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return lines.length - 1;
}

const CASES = [
  {
    name: 'year of hours: Sum(amount), Count, each vs previous hour',
    index: 'year',
    params: { rows: [hour], timeZone: 'Europe/Paris' },
    totals: [{ aggregationType: 'Sum', field: 'amount' }, { aggregationType: 'Count' }],
  },
  {
    name: 'year of hours x category: Sum(amount) vs previous hour',
    index: 'year',
    params: { rows: [hour], columns: [{ field: 'category' }] },
    totals: [{ aggregationType: 'Sum', field: 'amount' }],
  },
  {
    name: 'flights hours: Average(delay), Count, each vs previous hour',
    index: 'flights',
    params: { rows: [{ field: 'date', dateGroup: 'hour' }] },
    totals: [{ aggregationType: 'Average', field: 'delay' }, { aggregationType: 'Count' }],
  },
];

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-json-'));
  const yearFile = path.join(dir, 'year.csv');
  const records = writeYear(yearFile);
  const { env, token } = await benchData('j', [
    ['year', yearFile, '--type', 'time=date'],
    ['flights', path.join(VEGA, 'flights-3m.parquet')],
  ]);
  const server = await startServer(env);
  const rows = [];
  try {
    for (const c of CASES) {
      const totals = [...c.totals, ...c.totals.map((t) => ({ ...t, compare }))];
      const base = { index: c.index, cache: false, ...c.params, totals };
      const call = (format) => rpc(server.port, token, 'CROSSTAB.EXECUTE', { ...base, format });
      const first = (await call('json')).data;
      const csv = (await call('csv')).data;
      for (let i = 0; i < 2; i++) {
        await call('json');
        await call('csv');
      }
      const { a, b } = await timePair(
        RUNS,
        () => call('csv'),
        () => call('json'),
      );
      rows.push({
        crosstab: c.name,
        'rows x cols': `${first.rows.length} x ${first.columns.length}`,
        'json KB': fmt(Buffer.byteLength(JSON.stringify(first)) / 1024),
        'csv KB': fmt(Buffer.byteLength(typeof csv === 'string' ? csv : JSON.stringify(csv)) / 1024),
        'csv p50 ms': fmt(a.p50),
        'json p50 ms': fmt(b.p50),
        'ratio p50': fmt(b.p50 / a.p50),
        'json p95 ms': fmt(b.p95),
        'ok (<= 1.5x)': b.p50 <= 1.5 * a.p50 ? 'yes' : 'NO',
      });
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.table(rows);
  console.log(
    `${RUNS} runs each, csv and json in turns; year: ${records.toLocaleString('en-US')} records, flights: 3,000,000; cores: ${os.cpus().length}; node ${process.version}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

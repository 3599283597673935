import fs from 'node:fs';
import path from 'node:path';
import type { ChartGrid } from '../src/domain/chart-grid';

/*
 * Crosstab grids computed in plain JS from vega-datasets: the data that broke the first charts (money
 * in billions, 50+ states, long distributor names, negative delays). Test and gallery input only.
 */

// vega-datasets is a root dev dependency (its package exports hide package.json from require.resolve).
const VEGA = path.resolve(__dirname, '..', '..', '..', 'node_modules', 'vega-datasets', 'data');
type Rec = Record<string, unknown>;

const json = (file: string): Rec[] => JSON.parse(fs.readFileSync(path.join(VEGA, file), 'utf8')) as Rec[];

function csv(file: string): Rec[] {
  const [head, ...lines] = fs.readFileSync(path.join(VEGA, file), 'utf8').trim().split('\n');
  const cols = head.split(',');
  // Quoted fields may hold commas ("Montezuma, KS"): split outside quotes only.
  return lines.map((l) =>
    Object.fromEntries(
      (l.match(/("([^"]|"")*"|[^,]*)(,|$)/g) ?? []).map((v, i) => [cols[i], v.replace(/,$/, '').replace(/^"|"$/g, '')]),
    ),
  );
}

type Agg = 'sum' | 'count' | 'min' | 'mean';

const key = (r: Rec, f: string) => (r[f] === null || r[f] === undefined || r[f] === '' ? '(blank)' : String(r[f]));

function aggregate(recs: Rec[], agg: Agg, field?: string): number | null {
  const vs = field
    ? recs.map((r) => r[field]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v))
    : [];
  if (agg === 'count') return recs.length || null;
  if (!vs.length) return null;
  if (agg === 'sum') return vs.reduce((a, v) => a + v, 0);
  if (agg === 'min') return Math.min(...vs);
  return vs.reduce((a, v) => a + v, 0) / vs.length;
}

export interface Measure {
  name: string;
  agg: Agg;
  field?: string;
}

/** rows × optional column field, one or more measures; keys sorted like the crosstab (by label). */
export function gridOf(recs: Rec[], rowField: string, columnField: string | undefined, measures: Measure[]): ChartGrid {
  const rows = [...new Set(recs.map((r) => key(r, rowField)))].sort();
  const columns = columnField ? [...new Set(recs.map((r) => key(r, columnField)))].sort() : [];
  const byRow = (row: string) => recs.filter((r) => key(r, rowField) === row);
  return {
    rowFields: [rowField],
    columnFields: columnField ? [columnField] : [],
    totals: measures.map((m) => m.name),
    rows: rows.map((r) => [r]),
    columns: columns.map((c) => [c]),
    cells: rows.map((row) => {
      const rs = byRow(row);
      return columns.map((c) =>
        measures.map((m) =>
          aggregate(
            rs.filter((r) => key(r, columnField!) === c),
            m.agg,
            m.field,
          ),
        ),
      );
    }),
    rowTotals: rows.map((row) => measures.map((m) => aggregate(byRow(row), m.agg, m.field))),
  };
}

let moviesCache: Rec[] | undefined;
export const movies = () => (moviesCache ??= json('movies.json'));
let airportsCache: Rec[] | undefined;
export const airports = () => (airportsCache ??= csv('airports.csv'));
let flightsCache: Rec[] | undefined;
export const flights = () => (flightsCache ??= json('flights-2k.json'));

const gross: Measure = { name: 'Sum(Worldwide Gross)', agg: 'sum', field: 'Worldwide Gross' };
const budget: Measure = { name: 'Sum(Production Budget)', agg: 'sum', field: 'Production Budget' };
const count: Measure = { name: 'Count', agg: 'count' };

/** The grids that the tests and the gallery draw, each named for what makes it hard. */
export function trickyGrids(): Record<string, ChartGrid> {
  const rated = movies().filter(
    (m) => ['G', 'PG', 'PG-13', 'R'].includes(String(m['MPAA Rating'])) && m['Major Genre'],
  );
  const bigDistributors = new Set(
    Object.entries(
      movies().reduce<Record<string, number>>((a, m) => {
        const d = key(m, 'Distributor');
        a[d] = (a[d] ?? 0) + 1;
        return a;
      }, {}),
    )
      .filter(([, n]) => n >= 40)
      .map(([d]) => d),
  );
  const origins = new Set(['LAX', 'SFO', 'SEA', 'PHX', 'LAS', 'DEN', 'ORD', 'SAN', 'OAK', 'SMF']);
  return {
    // Billions on the value axis, 4 series, genre names of mixed length.
    money: gridOf(rated, 'Major Genre', 'MPAA Rating', [gross]),
    // Two measures of very different sizes, for combinations, scatter and dual axes.
    moneyTwo: gridOf(rated, 'Major Genre', undefined, [gross, count]),
    // The same by rating: columns × two totals of different sizes, each total wanting its own axis.
    moneyTwoByRating: gridOf(rated, 'Major Genre', 'MPAA Rating', [gross, count]),
    // 57 states and territories: far more categories than a pie legend row holds.
    states: gridOf(airports(), 'state', undefined, [count]),
    // Long names ("Twentieth Century Fox", "Lionsgate/Summit", …) and big money.
    distributors: gridOf(
      movies().filter((m) => bigDistributors.has(key(m, 'Distributor'))),
      'Distributor',
      undefined,
      [gross, budget],
    ),
    // Negative and positive values on one axis (early flights have negative delays), and a gap.
    delays: gridOf(
      flights().filter((f) => origins.has(String(f.origin))),
      'origin',
      undefined,
      [
        { name: 'Min(delay)', agg: 'min', field: 'delay' },
        { name: 'Avg(delay)', agg: 'mean', field: 'delay' },
      ],
    ),
    // One category only.
    single: gridOf(
      rated.filter((m) => m['Major Genre'] === 'Musical'),
      'Major Genre',
      'MPAA Rating',
      [gross],
    ),
  };
}

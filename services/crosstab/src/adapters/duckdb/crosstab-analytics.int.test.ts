import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { IndexEntry } from '@quarry/metadata-store';
import { parseQuery, type FieldDef } from '@quarry/query-language';
import { SnapshotEngine } from '@quarry/snapshots';
import { builtEntry } from '@quarry/testkit';
import { VEGA, type Rec } from '../../../../../tests/support/datasets';
import { mulberry32 } from '../../../../../tests/support/seeded-random';
import {
  analyticsOracle,
  type OracleAgg,
  type OracleAxis,
  type OracleSpec,
  type OracleTable,
  type OracleTotal,
} from '../../../../../tests/support/analytics-oracle';
import { crosstabSpec, MAX_CELLS } from '../../domain/crosstab-spec';
import { buildPivotTable } from '../../domain/pivot-table';
import { renderJson } from '../../domain/render-json';
import { crosstabInput, type SentCrosstab } from '../../../test-support/crosstab-input';
import { DuckDbPivotEngine } from './duckdb-pivot-engine.adapter';

/*
 * A differential test: seeded random crosstabs (axes, date groups in several zones, bins, every
 * aggregation, formulas, filters, showAs, subtotals) on real and generated records, each compared cell
 * by cell, subtotal and total with an oracle written in plain JS from the contract's words.
 */

/** Timestamps that cross midnight in most zones, text with blanks and case variants, numbers with gaps. */
function events(n: number): Rec[] {
  const rnd = mulberry32(99);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const start = Date.UTC(2023, 0, 1);
  return Array.from({ length: n }, () => {
    const ms = start + Math.floor(rnd() * 730) * 86_400_000 + pick([0, 1, 2, 3, 21, 22, 23]) * 3_600_000;
    const at = rnd() < 0.05 ? null : new Date(ms + Math.floor(rnd() * 60) * 60_000).toISOString().slice(0, 19);
    return {
      at: at === null ? null : at.replace('T', ' '),
      kind: pick(['alpha', 'Alpha', 'beta', 'gamma', '', null]),
      amount: rnd() < 0.1 ? null : Math.round((rnd() * 40 - 10) * 100) / 100,
      qty: rnd() < 0.1 ? null : Math.floor(rnd() * 9),
    };
  });
}

interface Dataset {
  entry: IndexEntry;
  records: Rec[];
  axes: OracleAxis[];
  numeric: string[];
  text: string[];
  zones: string[];
}

const close = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

function sameValues(got: Array<number | null>, want: Array<number | null>, where: string): void {
  const ok = got.length === want.length && got.every((g, i) => close(g, want[i]));
  if (!ok) throw new Error(`${where}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

interface JsonTable extends Omit<OracleTable, 'rows'> {
  rows: Array<{ key: OracleTable['columns'][number]; cells: Array<Array<number | null>>; total: Array<number | null> }>;
}

function compare(got: JsonTable, want: OracleTable): void {
  expect(got.columns).toEqual(want.columns);
  expect(got.rows.map((r) => r.key)).toEqual(want.rows.map((r) => r.key));
  expect(got.rowsFilteredOut).toBe(want.rowsFilteredOut);
  got.rows.forEach((r, i) => {
    const w = want.rows[i];
    r.cells.forEach((c, j) => sameValues(c, w.cells[j], `row ${JSON.stringify(r.key)} column ${j}`));
    sameValues(r.total, w.total, `row ${JSON.stringify(r.key)} total`);
  });
  got.columnTotals.forEach((c, j) => sameValues(c, want.columnTotals[j], `column total ${j}`));
  sameValues(got.grandTotal, want.grandTotal, 'grand total');
}

// Once per way the engine opens a snapshot: read into memory (small versions) and attached (large ones).
describe.each(['memory', 'attached'] as const)('crosstab analytics against a plain-JS oracle (%s)', (storage) => {
  let dir: string;
  let engine: SnapshotEngine;
  const data: Record<string, Dataset> = {};

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q-analytics-'));
    engine = new SnapshotEngine(dir);
    const entryOf = (name: string, file: string, types: Record<string, 'date'>): Promise<IndexEntry> =>
      builtEntry({
        name,
        file,
        dataDir: dir,
        types,
        views: [],
        attachMinRecords: storage === 'attached' ? 0 : Infinity,
      });
    const birdFile = path.join(VEGA, 'birdstrikes.csv');
    const bird = await entryOf('birdstrikes', birdFile, {});
    const numericBird = (bird.fields as FieldDef[]).filter((f) => f.type === 'integer' || f.type === 'number');
    const birdRecords = (parse(fs.readFileSync(birdFile), { columns: true }) as Rec[]).map((r) => {
      const out: Rec = { ...r };
      for (const f of numericBird) out[f.name] = r[f.name] === '' ? null : Number(r[f.name]);
      return out;
    });
    data.birdstrikes = {
      entry: bird,
      records: birdRecords,
      axes: [
        { field: 'Wildlife Size', type: 'string' },
        { field: 'Time of day', type: 'string' },
        { field: 'Phase of flight', type: 'string' },
        { field: 'Effect Amount of damage', type: 'string' },
        { field: 'Flight Date', type: 'date', calendar: true, dateGroup: 'year' },
        { field: 'Flight Date', type: 'date', calendar: true, dateGroup: 'quarter' },
        { field: 'Flight Date', type: 'date', calendar: true, dateGroup: 'monthOfYear' },
        { field: 'Flight Date', type: 'date', calendar: true, dateGroup: 'dayOfWeek' },
        { field: 'Speed IAS in knots', type: 'number', bin: { width: 50, origin: 0 } },
        { field: 'Speed IAS in knots', type: 'number', bin: { width: 75, origin: 20 } },
      ],
      numeric: ['Cost Total $', 'Speed IAS in knots', 'Cost Repair'],
      text: ['Wildlife Species', 'Aircraft Make Model'],
      zones: ['UTC', 'Asia/Tokyo'],
    };
    const eventRecords = events(3000);
    const eventFile = path.join(dir, 'events.json');
    fs.writeFileSync(eventFile, JSON.stringify(eventRecords));
    data.events = {
      entry: await entryOf('events', eventFile, { at: 'date' }),
      records: eventRecords,
      axes: [
        { field: 'kind', type: 'string' },
        { field: 'at', type: 'date', dateGroup: 'day' },
        { field: 'at', type: 'date', dateGroup: 'hour' },
        { field: 'at', type: 'date', dateGroup: 'week' },
        { field: 'at', type: 'date', dateGroup: 'month' },
        { field: 'at', type: 'date', dateGroup: 'dayOfWeek' },
        { field: 'at', type: 'date', dateGroup: 'hourOfDay' },
        { field: 'amount', type: 'number', bin: { width: 0.1, origin: 0 } },
        { field: 'amount', type: 'number', bin: { width: 7.5, origin: -3 } },
        { field: 'qty', type: 'number' },
      ],
      numeric: ['amount', 'qty'],
      text: ['kind'],
      zones: ['UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Chatham'],
    };
    expect((await engine.table(data.events.entry)).storage).toBe(storage);
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A random request within the cell limit, as the oracle's spec and as the params a caller sends. */
  function randomRequest(d: Dataset, rnd: () => number): { spec: OracleSpec; sent: SentCrosstab } {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const axes = [...d.axes].sort(() => rnd() - 0.5);
    // The week and hour groups have hundreds of keys: never both on one table.
    const wide = (a: OracleAxis) =>
      a.dateGroup === 'week' || a.dateGroup === 'hour' || a.dateGroup === 'day' || (a.bin?.width ?? 1) < 1;
    const nRows = 1 + Math.floor(rnd() * 2);
    const rows = axes.slice(0, nRows);
    const rest = axes.slice(nRows).filter((a) => !(wide(a) && rows.some(wide)) && a.field !== rows[0].field);
    const columns = rnd() < 0.5 || rest.length === 0 ? [] : [rest[0]].filter((a) => !wide(a));
    const totals: OracleTotal[] = [];
    const nTotals = 1 + Math.floor(rnd() * 3);
    const SHOW = [
      'value',
      'value',
      'percentOfGrandTotal',
      'percentOfRowTotal',
      'percentOfColumnTotal',
      'runningTotal',
      'differenceFromPrevious',
      'percentDifferenceFromPrevious',
    ];
    for (let i = 0; i < nTotals; i++) {
      const showAs = pick(SHOW);
      if (i >= 2 && rnd() < 0.6) {
        totals.push({ formula: { op: pick(['/', '-', '+'] as const), a: 0, b: 1 }, showAs });
        continue;
      }
      const agg = pick<OracleAgg>([
        'Count',
        'Sum',
        'Average',
        'Min',
        'Max',
        'Median',
        'Percentile',
        'StdDev',
        'CountDistinct',
      ]);
      if (agg === 'Count') totals.push(rnd() < 0.5 ? { agg, showAs } : { agg, field: pick(d.text), showAs });
      else if (agg === 'CountDistinct') totals.push({ agg, field: pick(d.text), showAs });
      else if (agg === 'Percentile')
        totals.push({ agg, field: pick(d.numeric), percentile: pick([1, 10, 25, 90, 99.5]), showAs });
      else totals.push({ agg, field: pick(d.numeric), showAs });
    }
    const subtotals = rnd() < 0.4;
    const rowFilter =
      rnd() < 0.3 ? { measure: 0, op: pick(['>', '>=', '<', '<=', '!=']), value: pick([0, 1, 5, 50]) } : undefined;
    const timeZone = pick(d.zones);
    const axisParam = (a: OracleAxis) => ({
      field: a.field,
      ...(a.dateGroup ? { dateGroup: a.dateGroup as 'year' } : {}),
      ...(a.bin ? { bin: a.bin } : {}),
    });
    const name = (i: number) => `t${i}`;
    const sent: SentCrosstab = {
      rows: rows.map(axisParam),
      columns: columns.map(axisParam),
      totals: totals.map((t, i) =>
        'formula' in t
          ? {
              name: name(i),
              formula: `[${name(t.formula.a)}] ${t.formula.op} [${name(t.formula.b)}]`,
              showAs: t.showAs as 'value',
            }
          : {
              name: name(i),
              aggregationType: t.agg,
              ...(t.field ? { field: t.field } : {}),
              ...(t.percentile !== undefined ? { percentile: t.percentile } : {}),
              showAs: t.showAs as 'value',
            },
      ),
      timeZone,
      subtotals,
      ...(rowFilter ? { rowFilter: { ...rowFilter, op: rowFilter.op as '>' } } : {}),
    };
    return { spec: { rows, columns, totals, timeZone, subtotals, rowFilter }, sent };
  }

  async function quarry(d: Dataset, sent: SentCrosstab, jsRollup: boolean): Promise<JsonTable | null> {
    const spec = crosstabSpec(d.entry, crosstabInput(sent));
    const where = parseQuery('*', { fields: d.entry.fields as FieldDef[], now: Date.now() });
    const pivots = new DuckDbPivotEngine(engine, jsRollup ? undefined : 0);
    const result = await pivots.pivot(d.entry, where, spec, MAX_CELLS);
    // Over the cell limit the engine returns the key counts only (the use case answers 400).
    if (result.groups.length === 0) return null;
    return JSON.parse(renderJson(buildPivotTable(spec, result.groups, { drill: result.drill }))) as JsonTable;
  }

  it('edges: a one-record group has its value as every percentile and no sample deviation; x / 0 is empty', async () => {
    const d = data.events;
    const got = await quarry(
      d,
      {
        rows: [{ field: 'at', dateGroup: 'hour' }],
        totals: [
          { name: 'n', aggregationType: 'Count', field: 'amount' },
          { name: 'p', aggregationType: 'Percentile', field: 'amount', percentile: 99.5 },
          { name: 'max', aggregationType: 'Max', field: 'amount' },
          { name: 'sd', aggregationType: 'StdDev', field: 'amount' },
          { name: 'least', aggregationType: 'Min', field: 'qty' },
          { name: 'per', formula: '[n] / [least]' },
        ],
        timeZone: 'Asia/Kolkata',
      },
      true,
    );
    const single = got!.rows.filter((r) => r.total[0] === 1);
    expect(single.length).toBeGreaterThan(10);
    for (const r of single) {
      expect(r.total[1]).toBe(r.total[2]);
      expect(r.total[3]).toBeNull();
    }
    const zero = got!.rows.filter((r) => r.total[4] === 0);
    expect(zero.length).toBeGreaterThan(10);
    for (const r of zero) expect(r.total[5]).toBeNull();
  });

  const SEEDS = Array.from({ length: 120 }, (_, i) => 1000 + i);
  it.each(SEEDS.map((s) => [s, s % 2 === 0 ? 'birdstrikes' : 'events'] as const))(
    'seed %i on %s: every cell, subtotal and total as the oracle computes it',
    async (seed, name) => {
      const d = data[name];
      const rnd = mulberry32(seed);
      const { spec, sent } = randomRequest(d, rnd);
      const got = await quarry(d, sent, seed % 3 !== 0);
      const want = analyticsOracle(d.records, spec);
      if (got === null) {
        // Refused: then the oracle's table is over the limit too.
        const cells = want.rows.length * Math.max(want.columns.length, 1) * spec.totals.length;
        expect(cells).toBeGreaterThan(MAX_CELLS);
        return;
      }
      try {
        compare(got, want);
      } catch (err) {
        throw new Error(`seed ${seed}, request ${JSON.stringify(sent)}: ${(err as Error).message}`, { cause: err });
      }
    },
    30_000,
  );
});

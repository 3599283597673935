import type { IndexEntry } from '@quarry/metadata-store';
import { crosstabInput, type SentCrosstab } from '../../test-support/crosstab-input';
import type { GroupRow } from './axis-value';
import { crosstabSpec } from './crosstab-spec';
import {
  applyComparison,
  isPartialKey,
  keysMoveWhole,
  markPartial,
  shiftedSpec,
  shiftOf,
  withCompare,
} from './period-compare';

const entry: IndexEntry = {
  name: 'delays',
  description: '',
  fields: [
    { name: 'date', type: 'date' },
    { name: 'carrier', type: 'string' },
    { name: 'delay', type: 'number' },
  ],
  views: [],
  recordCount: 0,
  version: 1,
  snapshot: 'delays/1.duckdb',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

function specOf(totals: Array<Record<string, unknown>>, rows: unknown[] = [{ field: 'date', dateGroup: 'month' }]) {
  const input = crosstabInput({ rows, totals } as SentCrosstab);
  const spec = crosstabSpec(entry, input);
  withCompare(input, spec.totals, [...spec.rows, ...spec.columns]);
  return spec;
}

const g = (month: string | null, values: Array<number | null>): GroupRow => ({
  rowKey: month === null ? [] : [month],
  columnKey: [],
  values,
});

describe('period comparison', () => {
  it('shifts a period forward by its length, a year by 12 months or 52 weeks', () => {
    const c = (to: 'previousPeriod' | 'previousYear', period: 'week' | 'quarter' | 'hour') =>
      shiftOf('date', { to, as: 'value', period });
    expect(c('previousPeriod', 'quarter')).toEqual({ field: 'date', unit: 'month', n: 3 });
    expect(c('previousPeriod', 'week')).toEqual({ field: 'date', unit: 'day', n: 7 });
    expect(c('previousYear', 'week')).toEqual({ field: 'date', unit: 'day', n: 364 });
    expect(c('previousYear', 'hour')).toEqual({ field: 'date', unit: 'month', n: 12 });
  });

  it('labels a compared total by its period unless it has a name, and keeps the period finest of the axes', () => {
    const spec = specOf(
      [
        { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousYear', as: 'difference' } },
        { aggregationType: 'Count', name: 'Flights', compare: { to: 'previousPeriod' } },
      ],
      [
        { field: 'date', dateGroup: 'year' },
        { field: 'date', dateGroup: 'day' },
      ],
    );
    expect(spec.totals.map((t) => t.name)).toEqual(['Sum (delay) vs same day last year', 'Flights']);
    expect(spec.totals[1].compare).toEqual({ to: 'previousPeriod', as: 'value', period: 'day' });
  });

  it('replaces each compared value from the shifted group of the same keys, counts of nothing being 0', () => {
    const spec = specOf([
      { aggregationType: 'Sum', field: 'delay' },
      { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod', as: 'difference' } },
      { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod', as: 'percentDifference' } },
      { aggregationType: 'Count', compare: { to: 'previousPeriod' } },
    ]);
    const main = [
      g('2025-01', [10, 10, 10, 4]),
      g('2025-02', [6, 6, 6, 3]),
      g('2025-03', [5, 5, 5, 2]),
      g(null, [21, 21, 21, 9]),
    ];
    // The shifted pivot has the compared totals only, in order; 2025-04 holds March's records: not shown.
    const shifted = [g('2025-02', [10, -4, 4]), g('2025-03', [0, 0, 1]), g('2025-04', [5, 5, 2]), g(null, [15, 15, 7])];
    const out = applyComparison(spec, main, shifted);
    expect(out.map((x) => x.values)).toEqual([
      [10, null, null, 0],
      [6, -4, 250, 4],
      [5, 5, null, 1],
      [21, 6, 40, 7],
    ]);
    expect(out).toHaveLength(4);
    expect(shiftedSpec(spec, shiftOf('date', spec.totals[1].compare!)).totals.map((t) => t.name)).toEqual([
      'Sum (delay) vs previous month',
      'Sum (delay) vs previous month (%)',
      'Count (Records), previous month',
    ]);
  });

  it('marks the partial last period on its axis only when the comparison was cut', () => {
    const spec = specOf(
      [{ aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod' } }],
      ['carrier', { field: 'date', dateGroup: 'month' }],
    );
    expect(
      markPartial(spec, 'date', {
        last: '2025-03-15 10:00:00.000000',
        key: '2025-03',
        safe: '2025-01-30 00:00:00.000000',
        partial: false,
      }),
    ).toBe(spec);
    const marked = markPartial(spec, 'date', {
      last: '2025-03-15 10:00:00.000000',
      key: '2025-03',
      safe: '2025-01-30 00:00:00.000000',
      partial: true,
    });
    expect(marked.comparePartial).toEqual({
      on: 'rows',
      field: 'date',
      key: '2025-03',
      lastRecord: '2025-03-15 10:00:00.000000',
    });
    expect(isPartialKey(marked.rows, ['AA', '2025-03'])).toBe(true);
    expect(isPartialKey(marked.rows, ['AA', '2025-02'])).toBe(false);
    expect(isPartialKey(marked.rows, ['AA'])).toBe(false);
  });

  it('compares a cell of the table with no records of its own, but shows no row or column the table has not', () => {
    const spec = specOf(
      [
        { aggregationType: 'Count' },
        { aggregationType: 'Count', compare: { to: 'previousPeriod', as: 'difference' } },
        { aggregationType: 'Count', compare: { to: 'previousPeriod', as: 'percentDifference' } },
        { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod', as: 'difference' } },
        { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod' } },
      ],
      ['carrier', { field: 'date', dateGroup: 'month' }],
    );
    const cell = (carrier: string, month: string, values: Array<number | null>): GroupRow => ({
      rowKey: [carrier, month],
      columnKey: [],
      values,
    });
    // AA has no record in February: its January record lands on February's key in the shifted pivot.
    const main = [cell('AA', '2025-01', [1, 1, null, 5, null]), cell('BB', '2025-02', [2, 2, null, 4, null])];
    const shifted = [cell('AA', '2025-02', [1, 1, 5, 5]), cell('CC', '2025-02', [3, 3, 1, 1])];
    const out = applyComparison(spec, main, shifted);
    // AA × February is not a row of the table: rows here are whole keys, so it is not shown...
    expect(out).toHaveLength(2);
    // ...but with month as the column it is a cell of row AA and column February.
    const crossed = (carrier: string, month: string, values: Array<number | null>): GroupRow => ({
      rowKey: [carrier],
      columnKey: [month],
      values,
    });
    const got = applyComparison(
      spec,
      [crossed('AA', '2025-01', [1, 1, null, 5, null]), crossed('BB', '2025-02', [2, 2, null, 4, null])],
      [crossed('AA', '2025-02', [1, 1, 5, 5]), crossed('CC', '2025-02', [3, 3, 1, 1])],
    );
    expect(got).toHaveLength(3);
    // Counted 0 against 1: −1 and −100 %; a sum of nothing has no difference, its previous value is 5.
    expect(got[2]).toEqual(crossed('AA', '2025-02', [null, -1, -100, null, 5]));
  });

  it('moves hour keys whole only in UTC: elsewhere a DST change makes the next hour another key', () => {
    expect(keysMoveWhole({ unit: 'hour' }, 'UTC')).toBe(true);
    expect(keysMoveWhole({ unit: 'hour' }, 'Europe/Paris')).toBe(false);
    expect(keysMoveWhole({ unit: 'day' }, 'Europe/Paris')).toBe(true);
    const hourly = specOf(
      [{ aggregationType: 'Count', compare: { to: 'previousPeriod' } }],
      [{ field: 'date', dateGroup: 'hour' }],
    );
    const paris = { ...hourly, timeZone: 'Europe/Paris' };
    expect(shiftedSpec(paris, shiftOf('date', paris.totals[0].compare!)).shift?.onKeys).toBe(false);
    expect(shiftedSpec(hourly, shiftOf('date', hourly.totals[0].compare!)).shift?.onKeys).toBe(true);
  });
});

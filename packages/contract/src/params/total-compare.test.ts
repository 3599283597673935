import type { z } from 'zod';
import { crosstabExecuteParams, parseParams } from '../index';
import { compareLabel, comparePeriod } from './total-compare';

function detailOf(params: Record<string, unknown>): string {
  try {
    parseParams(crosstabExecuteParams as z.ZodType, { index: 'x', ...params });
  } catch (err) {
    return (err as { detail: string }).detail;
  }
  throw new Error('accepted');
}

const compared = { aggregationType: 'Sum', field: 'delay', compare: { to: 'previousPeriod' } };

describe('compare on a total', () => {
  it('takes the finest calendar group of the one date field, whatever else groups it', () => {
    expect(
      comparePeriod([
        { field: 'date', dateGroup: 'year' },
        { field: 'carrier' },
        { field: 'Date', dateGroup: 'dayOfWeek' },
        { field: 'date', dateGroup: 'week' },
      ]),
    ).toEqual({ field: 'date', period: 'week' });
  });

  it('refuses two date fields grouped by calendar, naming both', () => {
    expect(
      detailOf({
        rows: [{ field: 'shipped', dateGroup: 'month' }],
        columns: [{ field: 'ordered', dateGroup: 'year' }],
        totals: [compared],
      }),
    ).toMatch(
      /totals\[0\]\.compare shifts one date field, but rows and columns group 2 by calendar \(shipped, ordered\)/,
    );
  });

  it('refuses a compared total as a column filter, and a huge or nested compare object', () => {
    expect(
      detailOf({
        rows: ['carrier'],
        columns: [{ field: 'date', dateGroup: 'month' }],
        columnFilter: { measure: 1, op: '>', value: 0 },
        totals: [{ aggregationType: 'Count' }, compared],
      }),
    ).toMatch(/columnFilter\.measure: filter on a total without compare/);
    expect(
      detailOf({
        rows: [{ field: 'date', dateGroup: 'month' }],
        totals: [{ ...compared, compare: { to: { to: 'previousYear' } } }],
      }),
    ).toMatch(/totals\[0\]\.compare\.to must be one of/);
    expect(
      detailOf({
        rows: [{ field: 'date', dateGroup: 'month' }],
        totals: [{ ...compared, compare: 'x'.repeat(100000) }],
      }),
    ).toMatch(/totals\[0\]\.compare must be an object with to/);
  });

  it('labels each way of comparing', () => {
    expect(compareLabel('Sum (Delay)', { to: 'previousYear', as: 'value' }, 'quarter')).toBe(
      'Sum (Delay), same quarter last year',
    );
    expect(compareLabel('Sum (Delay)', { to: 'previousPeriod', as: 'percentDifference' }, 'hour')).toBe(
      'Sum (Delay) vs previous hour (%)',
    );
  });
});

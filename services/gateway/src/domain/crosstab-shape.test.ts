import { crosstabShape } from './crosstab-shape';

describe('the crosstab shape the audit trail keeps', () => {
  it('keeps axes and totals by field name, never the query, a filter value or a formula', () => {
    const shape = crosstabShape({
      index: 'flights',
      query: 'origin:"SECRET"',
      rows: ['origin', { field: 'day', dateGroup: 'month' }],
      columns: [{ field: 'dest', reverse: true }],
      totals: [
        { aggregationType: 'Sum', field: 'delay' },
        { aggregationType: 'Count' },
        { aggregationType: 'Count', dynamicView: 'Destinations' },
        { name: 'ratio', formula: '[Sum of delay] / 2' },
      ],
      rowFilter: { measure: 0, op: '>', value: 12345 },
    });
    expect(JSON.parse(shape!)).toEqual({
      rows: [{ field: 'origin' }, { field: 'day', dateGroup: 'month' }],
      columns: [{ field: 'dest' }],
      totals: [{ aggregation: 'Sum', field: 'delay' }, { aggregation: 'Count' }],
    });
    expect(shape).not.toMatch(/SECRET|12345|ratio/);
  });

  it.each([
    ['no totals', { rows: ['a'] }],
    ['totals not an array', { rows: ['a'], totals: 'x' }],
    ['a huge axis list', { rows: Array(10_000).fill('a'), totals: [{ aggregationType: 'Count' }] }],
    ['a huge field name', { rows: ['a'.repeat(100_000)], totals: [{ aggregationType: 'Count' }] }],
    ['a nested axis', { rows: [{ field: { field: 'a' } }], totals: [{ aggregationType: 'Count' }] }],
    ['a binned axis', { rows: [{ field: 'a', bin: { width: 1 } }], totals: [{ aggregationType: 'Count' }] }],
    ['a null total', { rows: ['a'], totals: [null] }],
  ])('records nothing for %s', (_, params) => {
    expect(crosstabShape(params as Record<string, unknown>)).toBeNull();
  });
});

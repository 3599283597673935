import { AGGREGATIONS, completeCrosstabExecute, SHOW_AS } from '@quarry/contract';
import type { pb } from '@quarry/rpc';
import { crosstabInputFromWire } from './grpc-crosstab.handlers';

/** A request as grpc-js hands it over when the sender left every optional value out. */
function wire(over: Partial<pb.CrosstabRequest__Output> = {}): pb.CrosstabRequest__Output {
  return {
    caller: null,
    index: 'movies',
    query: '*',
    rows: ['Genre'],
    columns: [],
    totals: [{ aggregationType: 'count', field: '', dynamicView: '', name: '', showAs: '', formula: '' }],
    output: 'html',
    bypassCache: false,
    subtotals: false,
    totalsOn: '',
    rowOrder: null,
    columnOrder: null,
    rowAxes: [],
    timeZone: '',
    rowFilter: null,
    columnFilter: null,
    ...over,
  };
}

const detailOf = (req: pb.CrosstabRequest__Output): string => {
  try {
    crosstabInputFromWire(req);
  } catch (err) {
    return (err as { detail: string }).detail;
  }
  throw new Error('accepted');
};

describe('crosstabInputFromWire', () => {
  it("completes what the wire leaves absent with the contract's defaults, the values the gateway would send", () => {
    const fromContract = completeCrosstabExecute({
      index: 'movies',
      rows: ['Genre'],
      totals: [{ aggregationType: 'count' }],
    });
    const { rows, columns, totals, subtotals, totalsOn, rowOrder, columnOrder, timeZone } = fromContract;
    expect(crosstabInputFromWire(wire())).toEqual({
      rows,
      columns,
      totals,
      subtotals,
      totalsOn,
      rowOrder,
      columnOrder,
      timeZone,
    });
  });

  it('keeps what was sent, in the contract spelling', () => {
    const input = crosstabInputFromWire(
      wire({
        totals: [
          {
            aggregationType: ' SUM',
            field: 'Gross',
            dynamicView: '',
            name: 'Takings',
            showAs: 'percentOfRowTotal',
            formula: '',
          },
          { aggregationType: 'Count', field: '', dynamicView: '', name: '', showAs: '', formula: '' },
        ],
        rowOrder: { by: 'value', measure: 1, direction: 'DESC' },
        rowLimit: 3,
      }),
    );
    expect(input.totals[0]).toEqual({
      aggregationType: 'Sum',
      field: 'Gross',
      name: 'Takings',
      showAs: 'percentOfRowTotal',
    });
    expect(input.rowOrder).toEqual({ by: 'value', measure: 1, direction: 'desc' });
    expect(input.rowLimit).toBe(3);
    expect(input.columnLimit).toBeUndefined();
  });

  it.each<[string, Partial<pb.CrosstabRequest__Output>, string]>([
    [
      'an unknown aggregation, cut short',
      {
        totals: [{ aggregationType: 'x'.repeat(5000), field: '', dynamicView: '', name: '', showAs: '', formula: '' }],
      },
      'totals[0].aggregationType "' + 'x'.repeat(100) + '…" (5000 characters) is not one of ' + AGGREGATIONS.join(', '),
    ],
    [
      'an unknown showAs',
      { totals: [{ aggregationType: 'Count', field: '', dynamicView: '', name: '', showAs: 'median', formula: '' }] },
      `totals[0].showAs "median" is not one of ${SHOW_AS.join(', ')}`,
    ],
    [
      'an order by an unknown word',
      { rowOrder: { by: 'size', measure: 0, direction: '' } },
      'rowOrder.by "size" is not one of label, value',
    ],
    [
      'a measure past the totals',
      { columnOrder: { by: 'value', measure: 1, direction: '' } },
      'columnOrder.measure must be an index into totals, from 0 to 0',
    ],
  ])('a peer out of step sending %s gets a 400 naming it', (_, over, detail) => {
    expect(detailOf(wire(over))).toBe(detail);
  });
});

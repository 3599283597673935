import { completeCrosstabExecute, completeQueriesExecute } from './complete-params';
import { indexesFindParamsCodec, pivotParamsCodec, reportsFindParamsCodec, searchParamsCodec } from './internal-wire';
import { SHOW_AS } from './limits';
import { parseParams } from './parse-params';
import { crosstabExecuteParams, queriesExecuteParams } from './param-schemas';

const detailOf = (decode: () => unknown): string => {
  try {
    decode();
  } catch (err) {
    return (err as { detail: string }).detail;
  }
  throw new Error('accepted');
};

const completeCrosstab = (sent: Record<string, unknown>) =>
  completeCrosstabExecute(parseParams(crosstabExecuteParams, sent));

describe('pivotParamsCodec', () => {
  it.each<[string, Record<string, unknown>]>([
    ['the fewest params', { index: 'movies', rows: ['Genre'], totals: [{ aggregationType: 'count' }] }],
    [
      'every pivot param',
      {
        index: 'movies',
        query: ' Genre:Drama ',
        rows: ['Genre', { field: 'Released', dateGroup: 'year', reverse: true }],
        columns: [{ field: 'Gross', bin: { width: 1e6 } }],
        totals: [
          { aggregationType: ' SUM', field: 'Gross', name: 'Takings', showAs: 'percentOfRowTotal' },
          { aggregationType: 'Percentile', field: 'Gross', percentile: 90 },
          { aggregationType: 'Count', dynamicView: 'Titles' },
          { name: 'Share', formula: '[Takings] / 2' },
        ],
        subtotals: true,
        totalsOn: 'rows',
        rowOrder: { by: 'value', measure: 1, direction: 'desc' },
        columnOrder: { by: 'label' },
        rowLimit: 3,
        columnLimit: 2,
        rowFilter: { measure: 0, op: '>', value: 1 },
        columnFilter: { measure: 2, op: '!=', value: 0 },
        timeZone: 'Europe/Paris',
        cache: false,
        saveReport: { name: 'kept apart' },
      },
    ],
    [
      'a chart',
      { index: 'movies', rows: ['Genre'], totals: [{ aggregationType: 'Count' }], chartType: 'Pie2D', width: 300 },
    ],
  ])('carries %s as the contract completed them, and nothing else', (_, sent) => {
    const { output: _output, cache: _cache, verify: _verify, saveReport: _save, ...pivot } = completeCrosstab(sent);
    const json = pivotParamsCodec.encode(completeCrosstab(sent));
    expect(JSON.parse(json)).toEqual(pivot);
    // Completed params are a fixed point of completion: decoding fills nothing in.
    expect(pivotParamsCodec.decode(json)).toEqual(pivot);
  });

  const sent = { index: 'movies', rows: [{ field: 'Genre', reverse: false }], totals: [{ showAs: 'value' }] };

  it.each<[string, unknown, string]>([
    ['not JSON', '{', 'params_json is not JSON'],
    ['not an object', '[]', 'params_json must hold a JSON object'],
    [
      'an unknown showAs',
      { ...sent, totals: [{ aggregationType: 'Count', showAs: 'median' }] },
      `totals[0].showAs must be one of ${SHOW_AS.map((s) => JSON.stringify(s)).join(', ')}`,
    ],
    [
      'a measure past the totals',
      { ...sent, totals: [{ aggregationType: 'Count' }], columnOrder: { by: 'value', measure: 1 } },
      'columnOrder.measure must be an index into totals, from 0 to 0',
    ],
    [
      'a param no schema knows',
      { ...sent, totals: [{ aggregationType: 'Count' }], shape: 1 },
      'Unknown parameter: "shape"',
    ],
  ])('refuses a payload with %s as the gateway would: a 400 naming it', (_, payload, detail) => {
    const json = typeof payload === 'string' ? payload : JSON.stringify(payload);
    expect(detailOf(() => pivotParamsCodec.decode(json))).toContain(detail);
  });
});

describe('searchParamsCodec', () => {
  it('carries the completed search, without how the call uses the cache', () => {
    const complete = completeQueriesExecute(
      parseParams(queriesExecuteParams, {
        index: 'movies',
        sort: [{ field: 'Title', direction: ' DESC' }],
        cache: false,
      }),
    );
    const json = searchParamsCodec.encode(complete);
    const search = {
      index: 'movies',
      query: '*',
      page: 1,
      pageSize: 50,
      sort: [{ field: 'Title', direction: 'desc' }],
    };
    expect(JSON.parse(json)).toEqual(search);
    expect(searchParamsCodec.decode(json)).toEqual(search);
  });

  it('refuses what the schema refuses', () => {
    expect(detailOf(() => searchParamsCodec.decode(JSON.stringify({ index: 'movies', page: 0 })))).toMatch(/^page /);
  });
});

describe('the find codecs', () => {
  it('carry the completed INDEXES.FIND and REPORTS.FIND params, absent values absent', () => {
    const indexes = { searchText: 'mov', limit: 20 };
    expect(indexesFindParamsCodec.decode(indexesFindParamsCodec.encode(indexes))).toEqual(indexes);
    const reports = { types: ['crosstab' as const], limit: 5 };
    expect(reportsFindParamsCodec.decode(reportsFindParamsCodec.encode(reports))).toEqual(reports);
  });

  it('refuse what the schema refuses, with its message', () => {
    expect(detailOf(() => reportsFindParamsCodec.decode('{"types":["chart"]}'))).toBe(
      'types may hold only query and crosstab, got "chart"',
    );
  });
});

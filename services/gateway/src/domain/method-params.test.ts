import { crosstabExecuteParams, parseParams, queriesExecuteParams } from './method-params';

describe('method params', () => {
  it.each([[{}], [{ index: '' }], [{ index: '   ' }], [{ index: 5 }], [{ index: null }], [{ index: ['a'] }]])(
    'says exactly "index is required" for %p',
    (params) => {
      expect(() => parseParams(queriesExecuteParams, params)).toThrow(expect.objectContaining({ detail: 'index is required' }));
    },
  );

  it('names unknown parameters', () => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', foo: 1, bar: 2 })).toThrow(
      expect.objectContaining({ detail: 'Unknown parameters: foo, bar' }),
    );
  });

  it('names the parameter of a wrong type or range', () => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', pageSize: 1001 })).toThrow(/pageSize must be an integer between 1 and 1000/);
    expect(() => parseParams(queriesExecuteParams, { index: 'a', page: 1.5 })).toThrow(/page must be an integer/);
    expect(() => parseParams(queriesExecuteParams, { index: 'a', query: 'x'.repeat(10_001) })).toThrow(/query must be at most/);
    expect(() => parseParams(crosstabExecuteParams, { index: 'a', rows: [], totals: [{ aggregationType: 'Count' }] })).toThrow(/rows must name/);
    expect(() => parseParams(crosstabExecuteParams, { index: 'a', rows: ['r'], totals: [{ aggregationType: 'Count' }], width: 99 })).toThrow(/width must be an integer between 100 and 4000/);
  });

  it('validates saveReport', () => {
    expect(() => parseParams(queriesExecuteParams, { index: 'a', saveReport: { name: ' ' } })).toThrow(/saveReport.name is required/);
    expect(() => parseParams(queriesExecuteParams, { index: 'a', saveReport: 'x' })).toThrow(/saveReport must be an object/);
    expect(parseParams(queriesExecuteParams, { index: 'a', saveReport: { name: ' r ' } }).saveReport?.name).toBe('r');
  });
});

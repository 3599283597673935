import { RawJson } from '../ports/raw-json';
import { resultJson } from './result-json';

describe('resultJson', () => {
  const records = [
    { Title: 'Love "Actually"', n: 1, at: null },
    { Title: '\u0000raw-json-\u0000 ]}', n: 2.5, at: '2001-01-14' },
  ];

  it('splices a RawJson property as the text it holds, the same JSON as serializing the records', () => {
    const data = { index: 'movies', total: 2, records: new RawJson(JSON.stringify(records)) };
    const text = resultJson(7, data, { requestId: 'r1' });
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { data: { index: 'movies', total: 2, records }, meta: { requestId: 'r1' } },
    });
  });

  it('leaves user text that looks like the mark alone: the mark holds a random id', () => {
    const query = '\u0000raw-json-00000000-0000-0000-0000-000000000000\u0000';
    const data = { query, records: new RawJson('[]'), after: query };
    expect(JSON.parse(resultJson('a', data, { requestId: 'r' })).result.data).toEqual({
      query,
      records: [],
      after: query,
    });
  });

  it('serializes data without RawJson as JSON.stringify does', () => {
    const data = { rows: [1, 2], html: '<table>' };
    expect(resultJson(null, data, { requestId: 'r' })).toBe(
      JSON.stringify({ jsonrpc: '2.0', id: null, result: { data, meta: { requestId: 'r' } } }),
    );
    expect(JSON.parse(resultJson(1, 'text', { requestId: 'r' })).result.data).toBe('text');
  });

  it('refuses a RawJson it would not splice (nested deeper than the data)', () => {
    expect(() => resultJson(1, { page: { records: new RawJson('[]') } }, { requestId: 'r' })).toThrow(
      /direct property/,
    );
  });
});

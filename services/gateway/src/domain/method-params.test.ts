import { METHOD_NAMES } from '@quarry/contract';
import { readParams } from './method-params';

describe('readParams: the schema and complete steps', () => {
  it('parses with the method schema and applies its defaults', () => {
    const { sent, complete } = readParams('QUERIES.EXECUTE', { index: 'movies' });
    expect(sent).toEqual({ index: 'movies' });
    expect(complete).toMatchObject({ index: 'movies', query: '*', page: 1, sort: [], cache: true });
  });

  it('keeps the params of a method without defaults as they were sent', () => {
    const { sent, complete } = readParams('REPORTS.DELETE', { guid: 'g1' });
    expect(complete).toBe(sent);
  });

  it('names a problem under the param it is nested in', () => {
    expect(() => readParams('QUERIES.EXECUTE', { index: 'movies', page: 'x' }, 'params')).toThrow(/^params\.page /);
  });

  it('knows every method of the contract', () => {
    for (const method of METHOD_NAMES) expect(() => readParams(method, {})).not.toThrow(TypeError);
  });
});

import { readEnvelope } from './json-rpc-envelope';

describe('readEnvelope', () => {
  it('accepts a complete request and defaults params to {}', () => {
    expect(readEnvelope({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND' })).toEqual({
      ok: true,
      id: 1,
      method: 'INDEXES.FIND',
      params: {},
    });
  });

  it('cannot read ids of forbidden types', () => {
    for (const id of [true, [], {}, Infinity]) {
      const e = readEnvelope({ jsonrpc: '2.0', id, method: 'INDEXES.FIND' });
      expect(e).toMatchObject({ ok: false, idReadable: false, id: null });
    }
  });

  it('reports the first rule broken with the id echoed', () => {
    expect(readEnvelope({ jsonrpc: '2.0', id: 'x', method: 'INDEXES.FIND', params: [] })).toMatchObject({
      ok: false,
      idReadable: true,
      id: 'x',
      error: { code: -32600 },
      detail: 'params must be an object',
    });
    expect(readEnvelope({ jsonrpc: '2.0', id: 'x', method: 'toString' })).toMatchObject({ error: { code: -32601 } });
    expect(readEnvelope({ jsonrpc: '2.0', id: 'x', method: '__proto__' })).toMatchObject({ error: { code: -32601 } });
  });
});

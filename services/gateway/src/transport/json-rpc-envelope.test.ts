import { readEnvelope } from './json-rpc-envelope';

describe('readEnvelope', () => {
  it('accepts a complete request and defaults params to {}', () => {
    expect(readEnvelope({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND' })).toEqual({
      ok: true,
      id: 1,
      notification: false,
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

  it('tells a notification (a valid request without an id member) from a request with id null', () => {
    expect(readEnvelope({ jsonrpc: '2.0', method: 'INDEXES.FIND' })).toMatchObject({ ok: true, notification: true });
    expect(readEnvelope({ jsonrpc: '2.0', id: null, method: 'INDEXES.FIND' })).toMatchObject({
      ok: true,
      notification: false,
    });
    expect(readEnvelope({ jsonrpc: '2.0', method: 'NO.SUCH' })).toMatchObject({
      ok: false,
      notification: true,
      error: { code: -32601 },
    });
    // An invalid request object is no notification: it is answered (JSON-RPC 2.0 §5, id null).
    for (const body of [
      { jsonrpc: '1.0', method: 'INDEXES.FIND' },
      { jsonrpc: '2.0' },
      { jsonrpc: '2.0', method: 'INDEXES.FIND', params: 1 },
    ])
      expect(readEnvelope(body)).toMatchObject({ ok: false, notification: false, id: null });
  });
});

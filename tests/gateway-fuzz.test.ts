import fc from 'fast-check';
import { createIdentity } from './support/identities';
import { rawRequest, type RawResponse } from './support/http';
import { makeDataDir, startQuarry, type RunningQuarry } from './support/quarry-process';

const METHODS = ['QUERIES.EXECUTE', 'INDEXES.FIND', 'CROSSTAB.EXECUTE', 'REPORTS.FIND', 'REPORTS.METADATA'];

interface Body {
  jsonrpc?: string;
  error?: { code: number };
  result?: unknown;
}

/**
 * Whatever arrives, the gateway answers with a well-formed JSON-RPC or problem body, never a 5xx,
 * never -32603 (no genuine internal fault is involved), and keeps answering.
 */
describe('gateway under random input (fast-check)', () => {
  let quarry: RunningQuarry;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const dataDir = makeDataDir();
    const id = await createIdentity(dataDir, 'fuzzer');
    headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${id.token}` };
    quarry = await startQuarry({ topology: 'all', dataDir });
    // A hang guard: the start alone may take up to a minute on a loaded machine.
  }, 180_000);

  afterAll(async () => {
    await quarry?.stop();
  });

  const send = (body: string | Buffer) => rawRequest(quarry.baseUrl, { headers, body });

  function expectWellFormed(res: RawResponse): Body {
    expect([200, 400, 413]).toContain(res.status);
    const body = res.json as Body;
    expect(body).toBeDefined();
    expect(body.jsonrpc).toBe('2.0');
    if (body.error) {
      expect(body.error.code).not.toBe(-32603);
      // Business codes stay below 500, except a feature that has not landed yet (501) saying so.
      if (body.error.code >= 500) expect(body.error.code).toBe(501);
    }
    return body;
  }

  it('survives random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4000 }), async (bytes) => {
        expectWellFormed(await send(Buffer.from(bytes)));
      }),
      { numRuns: 150 },
    );
  });

  it('survives random JSON values as the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (value) => {
        expectWellFormed(await send(JSON.stringify(value) ?? 'null'));
      }),
      { numRuns: 150 },
    );
  });

  it('survives wrong types in every envelope member and param', async () => {
    const anything = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.string({ unit: 'binary', maxLength: 50 }),
      fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, '', '*', ') OR (*', '\u0000', '\ud800'),
    );
    const params = fc.dictionary(
      fc.constantFrom(
        'index',
        'query',
        'page',
        'pageSize',
        'sort',
        'rows',
        'columns',
        'totals',
        'chartType',
        'width',
        'height',
        'saveReport',
        'searchText',
        'cursor',
        'limit',
        'search',
        'types',
        'guid',
        'x',
      ),
      anything,
    );
    const envelope = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), anything),
        id: fc.oneof(fc.integer(), fc.string(), anything),
        method: fc.oneof(fc.constantFrom(...METHODS), anything),
        params: fc.oneof(params, anything),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(envelope, async (env) => {
        const res = await send(JSON.stringify(env));
        if (res.status === 204) {
          // A notification (a request without an id member) is answered with no body; nothing else is.
          expect('id' in env).toBe(false);
          expect(res.text).toBe('');
          return;
        }
        expectWellFormed(res);
      }),
      { numRuns: 400 },
    );
  });

  it('answers 100,000 levels of nesting in params, id and body without crashing', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const deepObj = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const r1 = expectWellFormed(
      await send(`{"jsonrpc":"2.0","id":1,"method":"QUERIES.EXECUTE","params":{"index":${deep}}}`),
    );
    expect(r1.error?.code).toBe(400);
    const r2 = expectWellFormed(await send(`{"jsonrpc":"2.0","id":${deepObj},"method":"INDEXES.FIND"}`));
    expect(r2.error?.code).toBe(-32600);
    const r3 = expectWellFormed(
      await send(`{"jsonrpc":"2.0","id":2,"method":"INDEXES.FIND","params":{"x":${deepObj}}}`),
    );
    expect(r3.error?.code).toBe(400);
    expectWellFormed(await send(deep));
    expectWellFormed(await send('['.repeat(600_000)));
  });

  it('treats huge numbers and odd Unicode as ordinary bad input', async () => {
    const huge = expectWellFormed(await send('{"jsonrpc":"2.0","id":1e400,"method":"INDEXES.FIND"}'));
    expect(huge.error?.code).toBe(-32600);
    const page = expectWellFormed(
      await send('{"jsonrpc":"2.0","id":1,"method":"QUERIES.EXECUTE","params":{"index":"a","page":1e400}}'),
    );
    expect(page.error?.code).toBe(400);
    const odd = expectWellFormed(
      await send('{"jsonrpc":"2.0","id":"\\ud800","method":"\\u202eQUERIES.EXECUTE\\u0000"}'),
    );
    expect(odd.error?.code).toBe(-32601);
  });

  it('still answers afterwards', async () => {
    const res = await rawRequest(quarry.baseUrl, { method: 'GET', path: '/healthz' });
    expect(res.status).toBe(200);
  });
});

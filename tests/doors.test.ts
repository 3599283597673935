import { rawRequest, type RawResponse } from './support/http';
import { createIdentity, type Identity } from './support/identities';
import { startStackWithData, type Stack } from './support/stack';

const ANON = { perSecond: 1, burst: 5 };

/*
 * The doors outside /api/v1 (MCP, export downloads, signed links) hold what /api/v1 holds: a request with no
 * valid credential draws on its address's allowance (QUARRY_ANON_RATE_LIMIT), one MCP POST is one message,
 * a hostile nesting is a clean 400, and a key that an object would swallow ("__proto__") is refused by name.
 */
describe('the doors outside /api/v1', () => {
  let stack: Stack;
  let analyst: Identity;

  beforeAll(async () => {
    stack = await startStackWithData({
      env: { QUARRY_ANON_RATE_LIMIT: String(ANON.perSecond), QUARRY_ANON_RATE_BURST: String(ANON.burst) },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst');
  }, 180_000);

  afterAll(async () => {
    await stack?.quarry.stop();
  });

  const mcpPost = (token: string, body: string): Promise<RawResponse> =>
    rawRequest(stack.quarry.baseUrl, {
      path: '/mcp',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${token}`,
      },
      body,
    });
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'doors', version: '1' } },
  });
  const toolCall = (id: number, args: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'crosstab_execute', arguments: args },
  });

  /** CROSSTAB.EXECUTE calls the gateway has answered, as its /metrics counts them (every outcome). */
  const crosstabsRun = async (): Promise<number> => {
    const text = await (await fetch(`${stack.quarry.opsUrl}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('quarry_rpc_requests_total{') && l.includes('method="CROSSTAB.EXECUTE"'))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };

  it('holds bad-token requests to /mcp, /exports/<id> and signed links to the per-address limit, as /api/v1', async () => {
    const bad = 'qry_' + 'x'.repeat(40);
    const doors: Array<[string, () => Promise<RawResponse>]> = [
      ['/mcp', () => mcpPost(bad, initialize)],
      [
        '/exports/<id>',
        () =>
          rawRequest(stack.quarry.baseUrl, {
            method: 'GET',
            path: `/exports/${'0'.repeat(32)}`,
            headers: { Authorization: `Bearer ${bad}` },
          }),
      ],
      [
        '/exports/signed/<token>',
        () => rawRequest(stack.quarry.baseUrl, { method: 'GET', path: '/exports/signed/x.y' }),
      ],
    ];
    const started = Date.now();
    const seen = new Map<string, number[]>();
    for (let i = 0; i < 30; i++) {
      const [door, send] = doors[i % doors.length];
      const res = await send();
      seen.set(door, [...(seen.get(door) ?? []), res.status]);
      // Every door the address limit governs says so in the IETF RateLimit fields (1/s, a burst of 5 over 5 s).
      expect(res.headers['ratelimit-policy']).toBe('"address";q=1;w=1, "address-burst";q=5;w=5');
      expect(res.headers['ratelimit']).toMatch(/^"address(-burst)?";r=\d+;t=\d+$/);
      if (res.status === 429) {
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(res.headers['ratelimit']).toBe(`"address-burst";r=0;t=${res.headers['retry-after']}`);
        expect(JSON.parse(res.text)).toMatchObject({ status: 429, detail: expect.stringMatching(/from this address/) });
      }
    }
    const seconds = Math.ceil((Date.now() - started) / 1000);
    for (const [door, statuses] of seen) {
      expect({ door, limited: statuses.includes(429) }).toEqual({ door, limited: true });
      // What is not limited is refused as before: a 401 without a valid token, a 404 for a link never signed.
      for (const s of statuses.filter((x) => x !== 429)) expect([401, 404]).toContain(s);
    }
    // The burst, then one a second: the doors share one allowance per address.
    const admitted = [...seen.values()].flat().filter((s) => s !== 429).length;
    expect(admitted).toBeLessThanOrEqual(ANON.burst + ANON.perSecond * seconds);
    // A valid token is not held to it.
    expect((await mcpPost(analyst.token, initialize)).status).toBe(200);
  });

  it('takes one MCP message per request: a batch is refused before any tool runs', async () => {
    const batch = Array.from({ length: 100 }, (_, i) =>
      toolCall(i + 1, {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Count' }],
        format: 'json',
      }),
    );
    const before = await crosstabsRun();
    const res = await mcpPost(analyst.token, JSON.stringify(batch));
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, data: { detail: 'Batches are not accepted: send one JSON-RPC message per request' } },
    });
    expect(res.text.length).toBeLessThan(1000);
    expect(await crosstabsRun()).toBe(before);
    // One of them alone runs, and is seen in the same log.
    const one = await mcpPost(analyst.token, JSON.stringify(batch[0]));
    expect(one.status).toBe(200);
    expect(JSON.stringify(one.json)).toContain('Crosstab of');
    expect(await crosstabsRun()).toBe(before + 1);
  });

  it('answers arguments nested 100,000 levels deep with a clean 400, not a stack overflow', async () => {
    const depth = 100_000;
    const body = JSON.stringify(toolCall(7, { index: 'movies' })).replace(
      '{"index":"movies"}',
      `{"index":"movies","rows":${'['.repeat(depth)}${']'.repeat(depth)}}`,
    );
    const res = await mcpPost(analyst.token, body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      error: { code: -32600, data: { detail: 'The message nests more than 64 levels deep' } },
    });
    expect(res.text).not.toMatch(/call stack/i);
    // A sensible call on the same door still runs.
    const ok = await mcpPost(analyst.token, initialize);
    expect(ok.status).toBe(200);
    expect(stack.quarry.alive()).toBe(true);
  });

  it('refuses a "__proto__" key in parameters with a 400 naming it, through JSON-RPC and MCP alike', async () => {
    const saved = await stack.data<{ report: { guid: string } }>(analyst, 'QUERIES.EXECUTE', {
      index: 'movies',
      query: '*',
      saveReport: {
        name: 'by genre',
        parameters: [{ name: 'genre', field: 'Major Genre', kind: 'values' }],
      },
    });
    // As an attacker sends it: an own key in the JSON text (an object literal would set the prototype).
    const params = `{"guid":"${saved.report.guid}","ttlSeconds":60,"parameters":{"__proto__":{"genre":["Drama"]}}}`;
    const res = await rawRequest(stack.quarry.baseUrl, {
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${analyst.token}` },
      body: `{"jsonrpc":"2.0","id":1,"method":"TOKENS.EMBED","params":${params}}`,
    });
    expect(res.json).toMatchObject({
      error: { code: 400, data: { detail: 'parameters.__proto__: "__proto__" is not accepted as a key' } },
    });
    const viaMcp = await mcpPost(
      analyst.token,
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"reports_execute","arguments":{"guid":"${saved.report.guid}","parameters":{"__proto__":{"genre":["Drama"]}}}}}`,
    );
    expect(viaMcp.status).toBe(200);
    expect(JSON.stringify(viaMcp.json)).toContain('parameters.__proto__: \\"__proto__\\" is not accepted as a key');
  });
});

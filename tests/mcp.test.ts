import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { METHOD_NAMES, METHODS } from '@quarry/contract';
import { QUARRY_BIN, runCli } from './support/quarry-process';
import { createIdentity, useStackWithAnalyst } from './support/stack';
import type { Identity } from './support/identities';

/*
 * Agents use Quarry through MCP (docs/mcp.md): the SDK's own client over Streamable HTTP at
 * /mcp and over stdio through `quarry mcp`, with the bearer tokens of /api/v1. Tools follow the token's
 * scopes, calls are JSON-RPC calls (realms, errors and the audit trail included).
 */

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

describe('MCP', () => {
  const env = useStackWithAnalyst();
  const clients: Client[] = [];

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
  });

  async function connect(token: string, over: 'http' | 'stdio' = 'http'): Promise<Client> {
    const base = env.stack().quarry.baseUrl;
    const transport: Transport =
      over === 'http'
        ? new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
            requestInit: { headers: { Authorization: `Bearer ${token}` } },
          })
        : new StdioClientTransport({
            command: process.execPath,
            args: [QUARRY_BIN, 'mcp'],
            env: { PATH: process.env.PATH ?? '', QUARRY_URL: base, QUARRY_TOKEN: token },
            stderr: 'pipe',
          });
    const client = new Client({ name: 'quarry-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('\n');
  const rpc = async <T>(who: Identity, method: string, params: unknown): Promise<T> => {
    const res = await env.stack().call<T>(who, method, params);
    if (!res.data) throw new Error(JSON.stringify(res.error));
    return res.data;
  };

  it.each(['http', 'stdio'] as const)(
    'over %s: one tool per method the token may call, named with underscores, with its params schema',
    async (over) => {
      const client = await connect(env.analyst().token, over);
      const { tools } = await client.listTools();
      // The analyst's token holds every scope but indexes:write and the admin API's (users:admin, tokens:write):
      // every method but the SOURCES.*, USERS.* and TOKENS.CREATE/FIND/REVOKE ones.
      const lacking: readonly string[] = ['indexes:write', 'users:admin', 'tokens:write'];
      expect(tools.map((t) => t.name).sort()).toEqual(
        METHOD_NAMES.filter((m) => !lacking.includes(METHODS[m].scope ?? ''))
          .map((m) => m.toLowerCase().replace('.', '_'))
          .sort(),
      );
      expect(METHOD_NAMES.filter((m) => METHODS[m].scope === 'indexes:write').length).toBeGreaterThan(0);
      const search = tools.find((t) => t.name === 'queries_execute')!;
      expect(search.description).toMatch(/Needs the query:execute scope/);
      expect(search.inputSchema).toMatchObject({ type: 'object', required: ['index'] });
      expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['index', 'query', 'page', 'pageSize', 'sort']),
      );
    },
  );

  it('a token without a scope sees no tool for it', async () => {
    const reader = await createIdentity(env.stack().dataDir, 'mcp-reader', { scopes: 'indexes:read' });
    const { tools } = await (await connect(reader.token)).listTools();
    // tokens_whoami needs no scope: any token may ask who it belongs to.
    expect(tools.map((t) => t.name)).toEqual(['indexes_find', 'tokens_whoami']);
  });

  it.each(['http', 'stdio'] as const)(
    'over %s: a search answers what QUERIES.EXECUTE answers, with a short text',
    async (over) => {
      const client = await connect(env.analyst().token, over);
      const params = {
        index: 'movies',
        query: '"toy story"',
        pageSize: 3,
        sort: [{ field: 'Worldwide Gross', direction: 'desc' }],
      };
      const result = (await client.callTool({ name: 'queries_execute', arguments: params })) as ToolResult;
      expect(result.isError).toBeFalsy();
      const direct = await rpc<{ total: number; records: unknown[] }>(env.analyst(), 'QUERIES.EXECUTE', params);
      expect(result.structuredContent).toMatchObject({ total: direct.total, records: direct.records });
      expect(text(result)).toMatch(/^3 records match in movies/);
    },
  );

  it('a tool result says which data gave it, and its replay token answers the same again through queries_replay', async () => {
    const client = await connect(env.analyst().token);
    const args = { index: 'movies', rows: ['MPAA Rating'], totals: [{ aggregationType: 'Count' }], format: 'json' };
    const result = (await client.callTool({ name: 'crosstab_execute', arguments: args })) as ToolResult & {
      _meta?: Record<string, unknown>;
    };
    const provenance = result._meta?.['quarry/provenance'] as { index: string; version: number; snapshot: string };
    expect(provenance).toMatchObject({ index: 'movies', engine: 'duckdb', servedBy: null });
    expect(provenance.snapshot).toMatch(/^[0-9a-f]{64}$/);
    expect(text(result)).toContain(
      `Answered from index movies version ${provenance.version} (records file sha-256 ${provenance.snapshot}) by duckdb`,
    );
    const replay = result._meta?.['quarry/replay'];
    expect(typeof replay).toBe('string');
    const again = (await client.callTool({ name: 'queries_replay', arguments: { token: replay } })) as ToolResult;
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(result.structuredContent);
  });

  it('a crosstab gives its table as structured content and its rows, totals and drill queries as text', async () => {
    const client = await connect(env.analyst().token);
    const result = (await client.callTool({
      name: 'crosstab_execute',
      arguments: { index: 'movies', rows: ['MPAA Rating'], totals: [{ aggregationType: 'Count' }], format: 'json' },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    const data = (result.structuredContent as { data: { rows: Array<{ key: unknown[]; total: number[] }> } }).data;
    expect(data.rows.length).toBeGreaterThan(3);
    expect(text(result)).toContain('drill: MPAA\\ Rating:=');
    expect(text(result)).toMatch(/Grand total: \[3201\]/);
  });

  it('runs a saved report by its guid, as REPORTS.EXECUTE does', async () => {
    const saved = await rpc<{ report: { guid: string } }>(env.analyst(), 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['Major Genre'],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
      saveReport: { name: 'Genres for agents' },
    });
    const client = await connect(env.analyst().token);
    const result = (await client.callTool({
      name: 'reports_execute',
      arguments: { guid: saved.report.guid },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ report: { guid: saved.report.guid, version: 1 } });
  });

  it('a tool call with bad arguments is an MCP tool error naming the param', async () => {
    const client = await connect(env.analyst().token);
    const result = (await client.callTool({
      name: 'queries_execute',
      arguments: { index: 'movies', pageSize: 0 },
    })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^400 Bad Request: .*pageSize/);
  });

  it('a bad token is refused, over HTTP and over stdio', async () => {
    await expect(connect('qk_not-a-token')).rejects.toThrow();
    const stdio = await connect('qk_not-a-token', 'stdio').catch((err: unknown) => err);
    expect(String(stdio)).toMatch(/Quarry at http/);
  });

  it('a realm user sees its own counts: the index resource and the search both', async () => {
    const realmUser = await createIdentity(env.stack().dataDir, 'mcp-realm', {
      indexes: '*',
      realms: [{ index: 'movies', query: '(Major Genre):Drama' }],
    });
    const client = await connect(realmUser.token);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['quarry://indexes/movies']));
    const read = await client.readResource({ uri: 'quarry://indexes/movies' });
    const entry = JSON.parse(String((read.contents[0] as { text: string }).text)) as {
      recordCount: number;
      fields: Array<{ name: string; type: string }>;
    };
    const search = (await client.callTool({
      name: 'queries_execute',
      arguments: { index: 'movies', pageSize: 1 },
    })) as ToolResult;
    expect(entry.recordCount).toBe((search.structuredContent as { total: number }).total);
    expect(entry.recordCount).toBeGreaterThan(0);
    expect(entry.recordCount).toBeLessThan(3201);
    expect(entry.fields).toEqual(expect.arrayContaining([{ name: 'Title', type: 'string' }]));
  });

  it('an embed token sees only what it was issued for, and its index', async () => {
    const embed = await rpc<{ token: string }>(env.analyst(), 'TOKENS.EMBED', { index: 'movies', ttlSeconds: 600 });
    const client = await connect(embed.token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['crosstab_execute', 'queries_execute']);
    const other = (await client.callTool({ name: 'queries_execute', arguments: { index: 'flights' } })) as ToolResult;
    expect(other.isError).toBe(true);
    expect(text(other)).toMatch(/^403 Forbidden: This embed token may only read index "movies"/);
  });

  it('its calls are in the audit trail like any JSON-RPC call', async () => {
    const auditor = await createIdentity(env.stack().dataDir, 'mcp-audited', { scopes: 'query:execute,indexes:read' });
    const client = await connect(auditor.token);
    await client.callTool({ name: 'queries_execute', arguments: { index: 'movies', query: 'alien', pageSize: 1 } });
    let lines = '';
    for (let i = 0; i < 50 && !lines.includes('QUERIES.EXECUTE'); i++) {
      lines = (await runCli(['audit', '--user', 'mcp-audited'], env.stack().env)).stdout;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(lines).toMatch(/mcp-audited\t\S+\tQUERIES\.EXECUTE\tmovies\tok/);
  });
});

describe('MCP under a rate limit', () => {
  const env = useStackWithAnalyst({ env: { QUARRY_RATE_LIMIT: '2', QUARRY_RATE_BURST: '2' } });

  it('tool calls draw on the token’s bucket as JSON-RPC calls do: past it, a tool error saying so', async () => {
    const client = new Client({ name: 'quarry-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${env.stack().quarry.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${env.analyst().token}` } },
      }),
    );
    try {
      const results = (await Promise.all(
        Array.from({ length: 12 }, () => client.callTool({ name: 'indexes_find', arguments: {} })),
      )) as ToolResult[];
      const limited = results.filter((r) => r.isError);
      expect(limited.length).toBeGreaterThan(0);
      expect(results.length - limited.length).toBeGreaterThan(0);
      for (const r of limited) expect(r.content[0].text).toMatch(/^429 .*Too many requests for this token/);
    } finally {
      await client.close();
    }
  });
});

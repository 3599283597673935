import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  API_VERSION,
  inlinedDocument,
  METHOD_NAMES,
  METHODS,
  openRpcDocument,
  type MethodName,
  type Provenance,
} from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { AuthenticateUseCase } from '../domain/authenticate.use-case';
import type { RateLimiter } from '../ports/rate-limiter.port';
import { refusedForAddress } from './address-limit';
import { sendProblem, sendProtocolError } from './http-responses';
import { PROTOCOL } from './json-rpc-envelope';
import { readBody } from './read-body';
import { isJsonMediaType, type BodyLimits } from './read-request';

/*
 * MCP (Streamable HTTP, stateless) on the gateway: each JSON-RPC method the bearer token's scopes allow
 * is a tool, named with underscores (QUERIES.EXECUTE → queries_execute), its input schema the method's
 * params schema and its description the contract's; each index the caller may read is a resource. A tool
 * call is a JSON-RPC call to this same gateway's /api/v1 with the caller's own token, so authentication,
 * realms, embed-token limits, rate limits and the audit trail are the ones every JSON-RPC call meets.
 */

export interface McpDeps extends BodyLimits {
  authenticate: AuthenticateUseCase;
  /** The gateway's own JSON-RPC endpoint, as this process reaches it (known once it listens). */
  rpcUrl: () => string;
  log: Logger;
  /** Per client address, for requests without a valid token, as on /api/v1 (QUARRY_ANON_RATE_LIMIT). */
  addressLimiter?: RateLimiter;
}

/**
 * Deeper than this, a message is refused before the SDK or a tool reads it: no tool's arguments nest half
 * as deep, and what walks a value recursively (validation, JSON.stringify) must not meet 100,000 levels.
 */
export const MCP_MAX_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether `value` nests objects or arrays more than `max` levels deep; walked without recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * A POST's one JSON-RPC message, read within the body limits: a batch (an array) is refused as /api/v1
 * refuses it, so one request is one call's work, and so is a message nested deeper than MCP_MAX_DEPTH.
 * Answers the refusal itself and resolves with undefined.
 */
async function readMessage(deps: McpDeps, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  if (!isJsonMediaType(req.headers['content-type'])) {
    sendProtocolError(res, 415, null, PROTOCOL.invalid, 'Content-Type must be application/json');
    return undefined;
  }
  const read = await readBody(req, deps.bodyLimitBytes, deps.bodyTimeoutMs);
  if (!read.ok) {
    if (read.reason === 'aborted') return undefined;
    res.setHeader('Connection', 'close');
    if (read.reason === 'too-slow')
      sendProblem(
        res,
        new AppError('REQUEST_TIMEOUT', `The request body did not arrive within ${deps.bodyTimeoutMs} ms`),
      );
    else sendProtocolError(res, 413, null, PROTOCOL.invalid, `The request body exceeds ${deps.bodyLimitBytes} bytes`);
    return undefined;
  }
  let message: unknown;
  try {
    message = JSON.parse(utf8.decode(read.body));
  } catch {
    sendProtocolError(res, 400, null, PROTOCOL.parse, 'The request body is not valid JSON');
    return undefined;
  }
  if (Array.isArray(message)) {
    sendProtocolError(
      res,
      400,
      null,
      PROTOCOL.invalid,
      'Batches are not accepted: send one JSON-RPC message per request',
    );
    return undefined;
  }
  if (nestsDeeperThan(message, MCP_MAX_DEPTH)) {
    sendProtocolError(res, 400, null, PROTOCOL.invalid, `The message nests more than ${MCP_MAX_DEPTH} levels deep`);
    return undefined;
  }
  return message;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const toolName = (method: MethodName) => method.toLowerCase().replace(/\./g, '_');

/** Every method as a tool, built once: the schemas come from the OpenRPC document, inlined. */
let catalogue: Array<{ method: MethodName; tool: Tool }> | undefined;
function tools(): Array<{ method: MethodName; tool: Tool }> {
  if (catalogue) return catalogue;
  const doc = inlinedDocument(openRpcDocument({ serverUrl: 'http://localhost/api/v1', version: API_VERSION }));
  catalogue = METHOD_NAMES.map((method) => {
    const m = doc.methods.find((x) => x.name === method)!;
    const params = m.params as Array<{ name: string; required: boolean; schema: Json }>;
    const inputSchema = {
      type: 'object' as const,
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema])) as Record<string, object>,
      required: params.filter((p) => p.required).map((p) => p.name),
      additionalProperties: false,
    };
    return {
      method,
      tool: { name: toolName(method), title: METHODS[method].summary, description: String(m.description), inputSchema },
    };
  });
  return catalogue;
}

/** What a model reads of a result: the first rows of a search or a table, its totals and drill queries. */
export function summarise(method: MethodName, data: unknown): string {
  const d = data as Record<string, unknown>;
  const clip = (v: unknown, n = 1500) => {
    const s = JSON.stringify(v);
    return s.length > n ? `${s.slice(0, n)}…` : s;
  };
  if (method === 'QUERIES.EXECUTE' && Array.isArray(d.records))
    return `${String(d.total)} records match in ${String(d.index)} (page ${String(d.page)} of ${String(d.totalPages)}). First records: ${clip(d.records.slice(0, 5))}`;
  const table = (d.data ?? null) as Record<string, unknown> | null;
  if (table && typeof table === 'object' && Array.isArray(table.rows)) {
    const rows = (table.rows as Array<{ key: unknown; total: unknown; query?: unknown }>)
      .slice(0, 10)
      .map((r) => `${clip(r.key, 200)}: ${clip(r.total, 200)}${r.query ? ` (drill: ${String(r.query)})` : ''}`);
    return [
      `Crosstab of ${String(table.rows.length)} rows; totals ${clip(table.measures ?? [], 400)}.`,
      ...rows,
      `Grand total: ${clip(table.grandTotal, 300)}`,
    ].join('\n');
  }
  return clip(data, 2000);
}

/** What an agent may quote of where a number came from. */
function provenanceLine(p: Provenance, replayable: boolean): string {
  return [
    `Answered from index ${p.index} version ${p.version}`,
    p.snapshot ? ` (records file sha-256 ${p.snapshot})` : '',
    ` by ${p.engine}`,
    p.servedBy ? ` through rollup ${p.servedBy}` : '',
    p.cached ? ', from the result cache' : '',
    replayable ? '; _meta["quarry/replay"] replays it (queries_replay).' : '.',
  ].join('');
}

/** A JSON-RPC call to this gateway with the caller's token: the same path as any client's. */
async function callRpc(
  deps: McpDeps,
  authorization: string,
  method: string,
  params: unknown,
): Promise<{
  data?: unknown;
  meta?: { provenance?: Provenance; replay?: string };
  error?: { code: number; message: string; data?: { detail?: string } };
}> {
  const res = await fetch(deps.rpcUrl(), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: authorization },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  if (res.status !== 200) {
    const problem = (await res.json().catch(() => ({}))) as { detail?: string; title?: string };
    return { error: { code: res.status, message: problem.title ?? 'Error', data: { detail: problem.detail } } };
  }
  const body = (await res.json()) as {
    result?: { data: unknown; meta?: { provenance?: Provenance; replay?: string } };
    error?: { code: number; message: string };
  };
  return body.error ? { error: body.error } : { data: body.result?.data, meta: body.result?.meta };
}

function mcpServer(deps: McpDeps, authorization: string, allowed: ReadonlySet<MethodName>): Server {
  const server = new Server(
    { name: 'quarry', version: API_VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Quarry: search indexes, pivot them into crosstabs with exact totals and drill queries, and run saved reports. Read the index resources for fields and types before building a query.',
    },
  );
  const mine = tools().filter((t) => allowed.has(t.method));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mine.map((t) => t.tool) }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const found = mine.find((t) => t.tool.name === req.params.name);
    if (!found)
      return {
        isError: true,
        content: [{ type: 'text', text: `No tool ${JSON.stringify(req.params.name)} for this token` }],
      };
    const out = await callRpc(deps, authorization, found.method, req.params.arguments ?? {});
    if (out.error)
      return {
        isError: true,
        content: [
          { type: 'text', text: `${out.error.code} ${out.error.message}: ${out.error.data?.detail ?? ''}`.trim() },
        ],
      };
    const provenance = out.meta?.provenance;
    const replay = out.meta?.replay;
    return {
      content: [
        { type: 'text', text: summarise(found.method, out.data) },
        ...(provenance ? [{ type: 'text' as const, text: provenanceLine(provenance, replay !== undefined) }] : []),
      ],
      structuredContent: out.data as Record<string, unknown>,
      // Which data gave the answer, and the token that answers it again (queries_replay), for agents that cite.
      ...(provenance
        ? { _meta: { 'quarry/provenance': provenance, ...(replay ? { 'quarry/replay': replay } : {}) } }
        : {}),
    };
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    if (!allowed.has('INDEXES.FIND')) return { resources: [] };
    const out = await callRpc(deps, authorization, 'INDEXES.FIND', { limit: 200 });
    const indexes = ((out.data as { indexes?: Array<{ name: string; description: string }> })?.indexes ?? []).map(
      (i) => ({
        uri: `quarry://indexes/${encodeURIComponent(i.name)}`,
        name: i.name,
        description: i.description || `The index ${i.name}`,
        mimeType: 'application/json',
      }),
    );
    return { resources: indexes };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const name = decodeURIComponent(/^quarry:\/\/indexes\/(.+)$/.exec(req.params.uri)?.[1] ?? '');
    const out = allowed.has('INDEXES.FIND')
      ? await callRpc(deps, authorization, 'INDEXES.FIND', { searchText: name, limit: 200 })
      : { data: { indexes: [] } };
    const entry = ((out.data as { indexes?: Array<{ name: string }> })?.indexes ?? []).find((i) => i.name === name);
    if (!entry) throw new Error(`No readable index ${JSON.stringify(name)}`);
    return { contents: [{ uri: req.params.uri, mimeType: 'application/json', text: JSON.stringify(entry) }] };
  });
  return server;
}

/** POST /mcp: the token is checked first, exactly as /api/v1 checks it; then one stateless MCP exchange. */
export function mcpHandler(deps: McpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const auth = await deps.authenticate.authenticate(req.headers.authorization);
      if (!auth.ok) {
        if (await refusedForAddress(deps.addressLimiter, req, res)) return;
        res.writeHead(auth.error.httpStatus, { 'Content-Type': 'application/problem+json' });
        res.end(
          JSON.stringify({
            type: 'about:blank',
            title: 'Unauthorized',
            status: auth.error.httpStatus,
            detail: auth.error.detail,
          }),
        );
        return;
      }
      const { scopes, embed } = auth.principal;
      // An embed token sees only what it may call: its index's search and pivot, or its one report.
      const embedded: readonly MethodName[] | undefined = embed
        ? embed.guid
          ? ['REPORTS.EXECUTE']
          : ['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE']
        : undefined;
      const allowed = new Set(
        METHOD_NAMES.filter((m) => {
          const c = METHODS[m] as { scope: string; alsoNeeds?: string };
          const scoped =
            (c.scope === null || scopes.has(c.scope as never)) && (!c.alsoNeeds || scopes.has(c.alsoNeeds as never));
          return scoped && (!embedded || embedded.includes(m));
        }),
      );
      let message: unknown;
      if (req.method === 'POST') {
        message = await readMessage(deps, req, res);
        if (message === undefined) return;
      }
      const server = mcpServer(deps, req.headers.authorization ?? '', allowed);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, message);
    })().catch((err: unknown) => {
      deps.log.error({ err }, 'mcp request failed');
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
      }
    });
  };
}

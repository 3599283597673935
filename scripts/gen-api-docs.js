#!/usr/bin/env node
// Writes docs/api.md from the contract's OpenRPC document: every method's params with their types,
// defaults and limits, its result, its errors and a real example. The document is built from the same
// zod schemas the gateway validates with, so the page cannot say one thing while the API does another.
// `npm run gen:api-docs` (after building the contract); tests/docs.test.ts fails when the file is stale.
const fs = require('node:fs');
const path = require('node:path');
const { inlinedDocument, openRpcDocument, METHODS } = require('@quarry/contract');
const { ERROR_TABLE } = require('@quarry/errors');

const OUT = path.join(__dirname, '..', 'docs', 'api.md');

/** Markdown table cells: pipes and newlines would break the row. */
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const code = (text) => `\`${String(text).replace(/`/g, "'")}\``;

/**
 * A JSON Schema's type in a few words: `integer`, `string (enum)`, `array of object`; inside a union an
 * object names its keys and a union within another type is parenthesised, so "an array, or an object"
 * does not read as "an array of either".
 */
function typeOf(s, within = 'top') {
  if (!s || typeof s !== 'object') return 'any';
  if (s.enum) return s.enum.map((v) => code(JSON.stringify(v))).join(' \\| ');
  if (s.anyOf || s.oneOf) {
    const words = (s.anyOf || s.oneOf).map((b) => typeOf(b, 'branch')).join(' or ');
    return within === 'top' ? words : `(${words})`;
  }
  if (s.type === 'array') return `array of ${typeOf(s.items, 'items')}`;
  if (within === 'branch' && s.type === 'object' && s.properties)
    return `object {${Object.keys(s.properties).join(', ')}}`;
  return s.type ?? 'any';
}

/** The limits a schema states: ranges, lengths, item counts, patterns. */
function limitsOf(s) {
  if (!s || typeof s !== 'object') return '';
  const out = [];
  if (s.minimum !== undefined || s.maximum !== undefined) out.push(`${s.minimum ?? '…'} to ${s.maximum ?? '…'}`);
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`);
  if (s.exclusiveMaximum !== undefined) out.push(`< ${s.exclusiveMaximum}`);
  if (s.minLength !== undefined && s.minLength > 0) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
  if (s.minItems !== undefined && s.minItems > 0) out.push(`at least ${s.minItems} items`);
  if (s.maxItems !== undefined) out.push(`at most ${s.maxItems} items`);
  if (s.pattern !== undefined && !s.enum) {
    // A keyword's pattern spells each word as [aA][bB]…: its words (the schema's examples) read better.
    const words = Array.isArray(s.examples) && s.examples.length > 1 && s.examples.every((e) => typeof e === 'string');
    if (words) {
      const anyCase = s.pattern.startsWith('^\\s*');
      out.push(`one of ${s.examples.map((e) => code(e)).join(', ')}${anyCase ? ' (any case)' : ''}`);
    } else out.push(`matches ${code(s.pattern)}`);
  }
  return out.join(', ');
}

/** One row per parameter, nested object properties as `parent.child` and `parent[].child`. */
function paramRows(name, schema, required, rows) {
  const def = schema.default !== undefined ? code(JSON.stringify(schema.default)) : '';
  rows.push(
    `| ${code(name)} | ${cell(typeOf(schema))} | ${required ? 'yes' : ''} | ${cell(def)} | ${cell(limitsOf(schema))} | ${cell(schema.description ?? '')} |`,
  );
  const item = schema.type === 'array' ? schema.items : schema;
  // A union's object branch has its keys listed too (a rows[] item that is not a field name).
  const inner =
    item && item.type === 'object' ? item : (item?.anyOf || item?.oneOf || []).find((b) => b.type === 'object');
  if (inner && inner.properties) {
    const prefix = schema.type === 'array' ? `${name}[]` : name;
    const req = new Set(inner.required ?? []);
    for (const [k, v] of Object.entries(inner.properties)) paramRows(`${prefix}.${k}`, v, req.has(k), rows);
  }
}

function method(m) {
  const contract = METHODS[m.name];
  const lines = [`## ${m.name}`, '', `${m.summary}`, '', m.description, ''];
  lines.push(`Scope: ${code(m['x-scope'])}.`, '');
  lines.push('### Params', '');
  if (m.params.length === 0) lines.push('None.', '');
  else {
    const rows = [
      '| name | type | required | default | limits | description |',
      '| --- | --- | --- | --- | --- | --- |',
    ];
    for (const p of m.params) paramRows(p.name, p.schema, p.required, rows);
    lines.push(...rows, '');
  }
  lines.push('### Result', '', `${m.result.description}`, '');
  // The schema is the whole result, {data, meta}: data's fields, then meta's.
  const { data, meta } = m.result.schema.properties;
  const rows = [
    ...Object.entries(data.properties ?? {}).map(([k, v]) => [`data.${k}`, v]),
    ...Object.entries(meta.properties ?? {}).map(([k, v]) => [`meta.${k}`, v]),
  ];
  if (data.anyOf) {
    // A union told apart by contentType (CROSSTAB.EXECUTE): each shape with its fields.
    lines.push('`data` is one of these shapes, told apart by `contentType`:', '');
    for (const branch of data.anyOf) {
      const kind = branch.properties?.contentType;
      const types = kind?.const !== undefined ? [kind.const] : (kind?.enum ?? []);
      lines.push(
        `- ${types.map((t) => code(t)).join(' or ')}: ${Object.keys(branch.properties ?? {})
          .map(code)
          .join(', ')}`,
      );
    }
    lines.push('');
  }
  lines.push('| field | type | description |', '| --- | --- | --- |');
  for (const [k, v] of rows) lines.push(`| ${code(k)} | ${cell(typeOf(v))} | ${cell(v.description ?? '')} |`);
  lines.push('');
  lines.push('### Errors', '', '| code | when |', '| --- | --- |');
  for (const e of contract.errors) lines.push(`| ${e.code} | ${cell(e.when)} |`);
  lines.push('');
  for (const ex of m.examples) {
    const params = Object.fromEntries(ex.params.map((p) => [p.name, p.value]));
    const request = { jsonrpc: '2.0', id: 1, method: m.name, params };
    lines.push(`### Example: ${ex.name}`, '', '```json', JSON.stringify(request, null, 2), '```', '');
    lines.push('`result`:', '', '```json', JSON.stringify(ex.result.value, null, 2), '```', '');
  }
  return lines.join('\n');
}

function renderApiDocs() {
  const doc = inlinedDocument(openRpcDocument({ serverUrl: 'http://127.0.0.1:8080/api/v1', version: 'current' }));
  const parts = [
    '<!-- Generated by scripts/gen-api-docs.js from @quarry/contract (npm run gen:api-docs). Do not edit. -->',
    '',
    '# Quarry API',
    '',
    doc.info.description,
    '',
    'The same description is served live as OpenRPC 1.3 at `GET /openrpc.json` and by the `rpc.discover` method;',
    'the typed client `@quarry/client` is generated from it. How a call travels inside Quarry is in',
    '[architecture.md](architecture.md).',
    '',
    '## Calling',
    '',
    '```sh',
    'curl -s "$QUARRY_URL/api/v1" -H "Authorization: Bearer $QUARRY_TOKEN" -H \'Content-Type: application/json\' \\',
    '  -d \'{"jsonrpc":"2.0","id":1,"method":"INDEXES.FIND","params":{}}\'',
    '```',
    '',
    'A successful call answers `{"jsonrpc":"2.0","id":…,"result":{"data":…,"meta":{"requestId":…}}}`; each',
    "method's OpenRPC `result` schema describes that whole `result` (`data` and `meta`).",
    '',
    '`QUARRY_URL` and `QUARRY_TOKEN` are the two variables `npm start` prints (`http://127.0.0.1:8080` and the',
    'demo token).',
    '',
    '### Notifications',
    '',
    'A request without an `id` member is a notification (JSON-RPC 2.0 §4.1): it is run, and answered with',
    'HTTP 204 and no body, errors included (an unknown method, invalid params, a business error). Only the',
    'plain-HTTP refusals that come before the body is read still answer: 401, 413, 415 and 429. A request',
    'object that is itself invalid (no `method`, a wrong `jsonrpc`, `params` not an object) is no notification',
    'and gets its -32600 error with `id` null; `"id": null` is a call, answered with `id` null. Batches (a JSON',
    'array) are refused with -32600: one request per call.',
    '',
    '### Rate limits',
    '',
    'With `QUARRY_RATE_LIMIT` set (requests per second, `QUARRY_RATE_BURST` more at once; unset: no limit),',
    'each API token has one allowance, and the embed tokens it issued draw on it too. Calls without a valid',
    'token (`rpc.discover`, a missing or wrong token) are limited per client address: `QUARRY_ANON_RATE_LIMIT`',
    '(20) a second and `QUARRY_ANON_RATE_BURST` (40) more at once; `0` turns that off. Beyond either, the',
    'answer is HTTP 429 `application/problem+json` with `Retry-After`, before the body is read. One user holds',
    'at most `QUARRY_EMBED_TOKENS_PER_USER` (100) live embed tokens. Scheduled deliveries have their own',
    'limits: see REPORTS.SCHEDULE.',
    '',
    'Every answer a limit governs carries the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers):',
    '`RateLimit-Policy` lists the policies (`q` requests per `w` seconds: `"token"` the rate, `"token-burst"`',
    'the burst, `"address"` and `"address-burst"` for calls without a token), and `RateLimit` where the caller',
    'stands on the one nearest to running out (`r` left, `t` seconds until it refills). With',
    '`QUARRY_RATE_LIMIT=0.5` and a burst of 4, an admitted call may show',
    '`RateLimit-Policy: "token";q=1;w=2, "token-burst";q=4;w=8` and `RateLimit: "token-burst";r=3;t=8`; a 429',
    'shows `r=0` and its `Retry-After` as `t`. A client can slow down before it is refused.',
    '',
    '### Idempotency-Key',
    '',
    'A call that creates something (EXPORTS.START, REPORTS.SCHEDULE, SOURCES.RUN, and QUERIES.EXECUTE or',
    'CROSSTAB.EXECUTE with `saveReport`) may carry an `Idempotency-Key` header (1–255 visible ASCII',
    'characters; a UUID is a good one). The first call with a key runs; a call with the same key and the same',
    'request (method and params, in any key order) gets its answer again and creates nothing, also while the',
    'first is still running (it waits for it, up to 35 s, then a 409 with `Retry-After`); the same key with',
    "another request is a 409 naming the key. Keys are the calling token's own and kept 24 h, in the",
    "deployment's Redis so every gateway replica sees them. A refusal a retry may pass (503, 504, 429, 500)",
    'frees the key. Other calls ignore the header. Uploads take it too, keyed on their bytes',
    '([uploads.md](uploads.md#retrying-an-upload-idempotency-key)); from Python, `idempotency_key=`',
    '([python-client.md](python-client.md#retries-and-idempotency-key)).',
    '',
    '```text',
    'curl -s "$QUARRY_URL/api/v1" -H "Authorization: Bearer $QUARRY_TOKEN" -H "Idempotency-Key: 5f0c…" \\',
    '  -d \'{"jsonrpc":"2.0","id":1,"method":"EXPORTS.START","params":{"method":"QUERIES.EXECUTE","params":{"index":"movies"},"format":"csv"}}\'',
    '```',
    '',
    '### Interactive charts',
    '',
    'CROSSTAB.EXECUTE with a `chartType` and `imageFormat: "echarts"` answers `contentType: "application/json"`',
    'with `data` the ECharts option the PNG and SVG are drawn from (the same builder, planned for `width` ×',
    '`height`), for clients that draw interactive charts: `echarts.init(el).setOption(data)`. It is plain JSON,',
    'with no functions. Where Quarry prints numbers compactly (`1.2M`), the setting (an `axisLabel`, a series',
    '`label`) names the formatter under `quarryFormatter`: `compact` or `compactValue`. ECharts ignores the key',
    'and prints its default numbers; `reviveChartOption(data)` from `@quarry/client` sets those formatters as',
    'functions so the chart reads like the image. Add `tooltip` or `toolbox` settings as your page needs them;',
    'legend entries toggle their series by default. The console at `/console` draws its charts this way.',
    '',
    '### Agents (MCP)',
    '',
    'The same methods are MCP tools (Model Context Protocol, Streamable HTTP) at `POST /mcp`, with the same',
    'bearer token: one tool per method the token may call, named with underscores (`queries_execute`,',
    "`crosstab_execute`, `reports_execute`, …), its input schema the method's params below and its",
    "description the method's. A tool call is a JSON-RPC call with the caller's token (realms, embed-token",
    "limits, rate limits and the audit trail apply); its result is `structuredContent` (the method's `data`)",
    "and a short text (a search's first records; a crosstab's first rows, totals and drill queries), and for",
    '`meta.provenance` and `meta.replay`, `_meta["quarry/provenance"]` and `_meta["quarry/replay"]`. An',
    "error is a tool result with `isError` and the method's error text (`400 Bad Request: … pageSize …`).",
    'Each index the token may read is a resource, `quarry://indexes/<name>` (fields, types, the record',
    'count as this caller sees it). For a desktop agent, `quarry mcp` speaks MCP over stdio and relays to the',
    'server at `QUARRY_URL` with `QUARRY_TOKEN`:',
    '',
    '```json',
    '{ "mcpServers": { "quarry": { "command": "npx", "args": ["quarry", "mcp"],',
    '  "env": { "QUARRY_URL": "http://127.0.0.1:8080", "QUARRY_TOKEN": "qk_…" } } } }',
    '```',
    '',
    '### Uploads',
    '',
    'Records go into an index over plain HTTP, the file as the body: `POST /indexes/<name>/records` with a',
    'token holding `indexes:write` (CSV, JSON, JSON Lines or Parquet, gzip accepted; modes replace, append and',
    'upsert by key). The answer accounts for every row; a failed load publishes nothing. See',
    '[uploads.md](uploads.md).',
    '',
    '## Methods',
    '',
    ...doc.methods.map((m) => `- [${m.name}](#${m.name.toLowerCase().replace(/\./g, '')}): ${m.summary}`),
    '',
    '## Error codes',
    '',
    'Business errors answer HTTP 200 with a JSON-RPC error whose `code` is the HTTP-style status below and',
    'whose `data` is `{type, detail}`; authentication failures are plain HTTP 401 `application/problem+json`.',
    '',
    '| Quarry code | JSON-RPC code | title |',
    '| --- | --- | --- |',
    ...Object.entries(ERROR_TABLE).map(([k, v]) => `| ${code(k)} | ${v.http} | ${v.title} |`),
    '',
    ...doc.methods.map(method),
  ];
  return `${parts
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

module.exports = { renderApiDocs, OUT };

if (require.main === module) {
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, renderApiDocs());
  console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
}

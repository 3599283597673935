import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Ajv from 'ajv';
import { SMTPServer } from 'smtp-server';
import { QuarryClient, QuarryError } from '@quarry/client';
import { inlinedDocument, METHODS, METHOD_NAMES, type MethodName, type OpenRpcDocument } from '@quarry/contract';
import { METHOD_EXAMPLES } from '../packages/contract/src/method-examples';
import { useDemoStack } from './support/demo-stack';
import { createIdentity } from './support/identities';

/*
 * The API describes itself (docs/api.md is generated from the same document): rpc.discover and /openrpc.json
 * over real HTTP, the typed client against the real server, and each method's documented example run
 * as written, with the demo token, on exactly what `npm start` serves (scripts/sample-data.sh), every live
 * result validated by ajv against the method's result schema from the live document.
 * The schedule examples need what an operator configures: an SMTP relay (QUARRY_SMTP_URL) and webhook hosts
 * (QUARRY_WEBHOOK_ALLOW). The test starts both, locally: hooks.example.com does not resolve here, so a
 * webhook URL is sent as the same path on the local receiver the allowlist names, and the ids a call gets
 * (a scheduleId, an embed token's id) are sent where a later example writes the shown one; the server's answers have both put back.
 * QUARRY_UPDATE_EXAMPLES=1 records the examples' answers from these calls (packages/contract/src/method-example-answers.json).
 */

// Required untyped: its types ship as .ts sources that do not compile under this repo's settings.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { validateOpenRPCDocument } = require('@open-rpc/schema-utils-js') as {
  validateOpenRPCDocument: (doc: unknown) => true | Error;
};

const hooks = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end());
});
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, _session, callback) {
    stream.resume();
    stream.on('end', () => callback());
  },
});
const local = { hooks: 0, smtp: 0 };
// The SOURCES examples' SQLite file, in the folder the server may read (QUARRY_SOURCE_FILE_DIRS).
const sourceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-openrpc-sources-'));
const shopFile = path.join(sourceDir, 'shop.sqlite');
beforeAll(async () => {
  const db = new Database(shopFile);
  db.exec(
    'CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer TEXT, amount REAL, placed TEXT);' +
      "INSERT INTO orders VALUES (1, 'Ada', 42.5, '2026-11-30'), (2, 'Grace', 17.25, '2026-12-01'), (3, 'Ada', 8, '2026-12-01')",
  );
  db.close();
  await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  local.hooks = (hooks.address() as AddressInfo).port;
  local.smtp = (smtp.server.address() as AddressInfo).port;
});
afterAll(async () => {
  fs.rmSync(sourceDir, { recursive: true, force: true });
  await new Promise((resolve) => hooks.close(resolve));
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});
const demo = useDemoStack(() => ({
  QUARRY_WEBHOOK_ALLOW: `127.0.0.1:${local.hooks}`,
  QUARRY_SMTP_URL: `smtp://127.0.0.1:${local.smtp}`,
  QUARRY_SOURCE_FILE_DIRS: sourceDir,
}));
// What the tests below used from the shared stack: the server, and a caller who may read every index.
const stack = () => ({ quarry: demo().quarry, dataDir: demo().dataDir });
const analyst = () => ({ token: demo().token });
const ANSWERS_FILE = path.join(__dirname, '../packages/contract/src/method-example-answers.json');
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack().quarry.baseUrl}/api/v1`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/** Guids, times, tokens and secrets change with every run; everything else an example shows must not. */
// An embed token (TOKENS.EMBED) is new with every call: signed, with its own id and times.
const JWT = /^eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
// A webhook's signing secret (REPORTS.SCHEDULE) is derived from the schedule's id and the server's key.
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
// The head of an API token (TOKENS.WHOAMI): the demo token is made anew for every stack.
const TOKEN_PREFIX = /^qk_[A-Za-z0-9_-]{6}$/;
// A whole API token (TOKENS.CREATE): new with every call, and shown once.
const API_TOKEN = /^qk_[A-Za-z0-9]{43}$/;
// A version's records file's SHA-256 (meta.provenance.snapshot): the sample data is loaded anew for every stack.
const SHA256 = /^[0-9a-f]{64}$/;
// A replay token (meta.replay) of a call whose token no later example sends.
const REPLAY = /^qr1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const MASKS: Array<[RegExp, string]> = [
  [SHA256, '<sha256>'],
  [REPLAY, '<replay>'],
  [TOKEN_PREFIX, '<token prefix>'],
  [API_TOKEN, '<token>'],
  [GUID, '<guid>'],
  [TIME, '<time>'],
  [JWT, '<jwt>'],
  [SECRET, '<secret>'],
];

/** `value` with each string in it, at any depth, replaced by `f` of it. */
function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  return value;
}

const stable = (value: unknown) => mapStrings(value, (s) => MASKS.find(([re]) => re.test(s))?.[1] ?? s);

describe('rpc.discover and /openrpc.json', () => {
  it('answers rpc.discover without a token with a valid OpenRPC document naming this server', async () => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'rpc.discover' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      id: number;
      result: { openrpc: string; servers: Array<{ url: string }>; methods: Array<{ name: string }> };
    };
    expect(body.id).toBe(7);
    expect(body.result.openrpc).toBe('1.3.2');
    expect(body.result.servers[0].url).toBe(`${stack().quarry.baseUrl}/api/v1`);
    expect(body.result.methods.map((m) => m.name)).toEqual(METHOD_NAMES);
    expect(validateOpenRPCDocument(body.result as never)).toBe(true);
  });

  it('every schema compiles in ajv’s strict mode, with each repeated shape once under components/schemas', async () => {
    const doc = (await (await fetch(`${stack().quarry.baseUrl}/openrpc.json`)).json()) as OpenRpcDocument;
    const names = Object.keys(doc.components.schemas);
    expect(names.length).toBeGreaterThan(5);
    const text = JSON.stringify({ methods: doc.methods, components: doc.components });
    // Each component is used (by a method or another component), and every reference names one.
    for (const name of names) expect(text).toContain(`"#/components/schemas/${name}"`);
    for (const ref of text.match(/"#\/components\/schemas\/[^"]+"/g) ?? [])
      expect(names).toContain(ref.slice('"#/components/schemas/'.length, -1));
    // Strict ajv, with the components where a tool resolving the document finds them.
    const ajv = new Ajv({ strict: true });
    ajv.addKeyword('components');
    let compiled = 0;
    for (const m of doc.methods as unknown as Array<{ params: Array<{ schema: object }>; result: { schema: object } }>)
      for (const schema of [m.result.schema, ...m.params.map((p) => p.schema)]) {
        ajv.compile({ ...schema, components: doc.components });
        compiled++;
      }
    expect(compiled).toBeGreaterThan(METHOD_NAMES.length);
    expect(text).not.toMatch(/"type":\[/);
  });

  it('serves the same document at GET /openrpc.json, and to a caller with a token', async () => {
    const viaGet = await (await fetch(`${stack().quarry.baseUrl}/openrpc.json`)).json();
    const viaRpc = (
      (await (
        await post({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' }, { Authorization: `Bearer ${analyst().token}` })
      ).json()) as { result: unknown }
    ).result;
    expect(viaGet).toEqual(viaRpc);
  });

  it('still refuses every other method without a token (401 problem), and rpc.discover with a wrong one', async () => {
    const noToken = await post({ jsonrpc: '2.0', id: 1, method: 'INDEXES.FIND', params: {} });
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const badToken = await post(
      { jsonrpc: '2.0', id: 1, method: 'rpc.discover' },
      { Authorization: 'Bearer qry_not-a-token' },
    );
    expect(badToken.status).toBe(401);
  });

  it('does not echo a Host header that is not a host name into the server URL', async () => {
    const http = await import('node:http');
    const url = new URL(stack().quarry.baseUrl);
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: '/openrpc.json', headers: { Host: 'evil.example/"><script>' } },
        (res) => {
          let out = '';
          res.on('data', (c: Buffer) => (out += c.toString()));
          res.on('end', () => resolve(out));
        },
      );
      req.on('error', reject);
      req.end();
    });
    const doc = JSON.parse(text) as { servers: Array<{ url: string }> };
    expect(doc.servers[0].url).toBe('http://localhost/api/v1');
  });
});

describe('@quarry/client against the real server', () => {
  const client = () => new QuarryClient({ url: stack().quarry.baseUrl, token: analyst().token });

  it('runs every method of each group, and each answer matches the contract’s result schema', async () => {
    const c = client();
    const found = await c.indexes.find({ limit: 10 });
    expect(found.indexes.map((i) => i.name).sort()).toEqual(['airports', 'movies']);
    const page = await c.queries.execute({ index: 'movies', query: 'Title:Titanic', pageSize: 5 });
    expect(page.records.every((r) => String(r.Title).includes('Titanic'))).toBe(true);
    const table = await c.crosstab.execute({
      index: 'movies',
      rows: ['MPAA Rating'],
      totals: [{ aggregationType: 'Count' }],
      format: 'json',
      saveReport: { name: 'client: ratings' },
    });
    expect(table.contentType).toBe('application/json');
    const reports = await c.reports.find({ search: 'client ratings' });
    expect(reports.reports.map((r) => r.name)).toContain('client: ratings');
    const meta = await c.reports.metadata({ guid: reports.reports[0].guid });
    expect(meta.method).toBe('CROSSTAB.EXECUTE');
    for (const [method, value] of [
      ['INDEXES.FIND', found],
      ['QUERIES.EXECUTE', page],
      ['CROSSTAB.EXECUTE', table],
      ['REPORTS.FIND', reports],
      ['REPORTS.METADATA', meta],
    ] as const) {
      expect(METHODS[method].result.safeParse(value).error).toBeUndefined();
    }
  });

  it('gives result.meta with the request id through call()', async () => {
    const { meta } = await client().call('QUERIES.EXECUTE', { index: 'movies', pageSize: 1 });
    expect(meta.requestId).toMatch(/\S/);
    expect(['hit', 'miss', 'bypass']).toContain(meta.cache);
  });

  it('rejects with QuarryError carrying the code, the server’s detail and the request id', async () => {
    const err = await client()
      .queries.execute({ index: 'movies', query: '(Title:' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuarryError);
    const q = err as QuarryError;
    expect(q.code).toBe(400);
    expect(q.title).toBe('Bad Request');
    expect(q.detail).toMatch(/\S/);
    expect(q.requestId).toMatch(/\S/);
    const unauth = await new QuarryClient({ url: stack().quarry.baseUrl, token: 'qry_wrong' }).indexes
      .find()
      .catch((e: unknown) => e);
    expect(unauth).toBeInstanceOf(QuarryError);
    expect((unauth as QuarryError).code).toBe(401);
    const reader = await createIdentity(stack().dataDir, 'index-reader', { scopes: 'indexes:read' });
    const forbidden = await new QuarryClient({ url: stack().quarry.baseUrl, token: reader.token }).queries
      .execute({ index: 'movies' })
      .catch((e: unknown) => e);
    expect((forbidden as QuarryError).code).toBe(403);
    expect((forbidden as QuarryError).detail).toContain('query:execute');
  });

  it('discovers the document without a token', async () => {
    const doc = await new QuarryClient({ url: stack().quarry.baseUrl }).discover();
    expect(doc.openrpc).toBe('1.3.2');
  });
});

interface LiveDocument {
  methods: Array<{
    name: MethodName;
    result: { schema: Record<string, unknown> };
    examples: Array<{ params: Array<{ name: string; value: unknown }>; result: { value: unknown } }>;
  }>;
}

/** `value` with every string that is a key of `swaps` replaced by its value. */
const swapped = (value: unknown, swaps: ReadonlyMap<string, string>) => mapStrings(value, (s) => swaps.get(s) ?? s);

describe('each method’s examples in the document are real calls on what npm start serves', () => {
  type Live = { data: unknown; meta: Record<string, unknown> };
  const live: Partial<Record<MethodName, Live[]>> = {};
  let document: LiveDocument;
  /** Every example of every method, as [method, position]. */
  const EXAMPLES = METHOD_NAMES.flatMap((name) => METHOD_EXAMPLES[name].map((_, i) => [name, i] as const));

  beforeAll(async () => {
    document = (
      (await (await post({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' })).json()) as { result: LiveDocument }
    ).result;
    // What the examples write -> what is sent here: the local webhook receiver, and ids earlier calls got.
    const sent = new Map<string, string>([[SHOP_FILE_SHOWN, shopFile]]);
    const replays = new Map<string, string>();
    for (const m of document.methods) {
      live[m.name] = [];
      for (const example of m.examples) {
        // The params as the document writes them, with the token npm start prints.
        const params = Object.fromEntries(example.params.map((p) => [p.name, p.value]));
        const webhook = (params as { deliver?: { webhook?: { url?: string } } }).deliver?.webhook?.url;
        if (webhook) sent.set(webhook, `http://127.0.0.1:${local.hooks}${new URL(webhook).pathname}`);
        const res = await post(
          { jsonrpc: '2.0', id: 1, method: m.name, params: swapped(params, new Map([...sent, ...replays])) },
          { Authorization: `Bearer ${analyst().token}`, 'X-Request-Id': 'example' },
        );
        const body = (await res.json()) as { result?: Live; error?: unknown };
        if (!body.result) throw new Error(`${m.name}'s example failed: ${JSON.stringify(body.error)}`);
        // The ids a later example sends: a schedule's (REPORTS.UNSCHEDULE), an embed token's (TOKENS.REVOKE_EMBED),
        // an export's (EXPORTS.STATUS).
        for (const key of ['scheduleId', 'id', 'exportId', 'sourceId', 'runId']) {
          const shownId = (example.result.value as { data?: Record<string, unknown> }).data?.[key];
          const liveId = (body.result.data as Record<string, unknown>)[key];
          if (typeof shownId === 'string' && typeof liveId === 'string' && !sent.has(shownId))
            sent.set(shownId, liveId);
          // Not recorded yet (a new example): the id method-examples.ts writes until it is.
          else if (shownId === undefined && key === 'id' && typeof liveId === 'string' && !sent.has(UNRECORDED_ID))
            sent.set(UNRECORDED_ID, liveId);
        }
        // The replay token a later example sends (QUERIES.REPLAY): signed anew, with its own time, every run.
        // Sent, never swapped back: the document records a real token (the mask compares them).
        const shownReplay = (example.result.value as { meta?: { replay?: unknown } }).meta?.replay;
        const liveReplay = body.result.meta.replay;
        if (typeof shownReplay === 'string' && typeof liveReplay === 'string' && !replays.has(shownReplay))
          replays.set(shownReplay, liveReplay);
        if (typeof liveReplay === 'string' && !replays.has(UNRECORDED_REPLAY))
          replays.set(UNRECORDED_REPLAY, liveReplay);
        // The EXPORTS.STATUS example shows the export done: wait for it, so its answer is the same every run.
        if (m.name === 'EXPORTS.START') await exportDone((body.result.data as { exportId: string }).exportId);
        // The SOURCES.RUNS example shows the run done: wait for it too.
        if (m.name === 'SOURCES.RUN') await sourceRunDone(swapped(params, sent) as { sourceId: string });
        live[m.name]!.push(swapped(body.result, new Map([...sent].map(([shown, s]) => [s, shown]))) as Live);
      }
    }
    if (process.env.QUARRY_UPDATE_EXAMPLES === '1') writeExamples(live);
    // A hang guard: every example in turn, a chart, a delivery and an export among them, on a loaded machine.
  }, 180_000);

  it('the document shows every example the contract holds', () => {
    expect(document.methods.map((m) => [m.name, m.examples.length])).toEqual(
      METHOD_NAMES.map((name) => [name, METHOD_EXAMPLES[name].length]),
    );
  });

  it.each(EXAMPLES)('%s example %i: the live result validates against the method’s result schema (ajv)', (name, i) => {
    const m = (
      inlinedDocument(document as unknown as OpenRpcDocument).methods as unknown as LiveDocument['methods']
    ).find((x) => x.name === name)!;
    const validate = new Ajv({ allErrors: true, strict: true }).compile(m.result.schema);
    validate(live[name]![i]);
    expect(validate.errors ?? []).toEqual([]);
    expect(METHODS[name].result.safeParse(live[name]![i].data).error).toBeUndefined();
  });

  it.each(EXAMPLES)('%s example %i: answers what the document shows', (name, i) => {
    const shown = document.methods.find((x) => x.name === name)!.examples[i].result.value;
    expect(stable(live[name]![i])).toEqual(stable(shown));
  });
});

/** The replay token the QUERIES.REPLAY example sends until the QUERIES.EXECUTE example's answer is recorded. */
const UNRECORDED_REPLAY = 'qr1.unrecorded.unrecorded';

/** The token id the TOKENS.REVOKE example sends until the TOKENS.CREATE example's answer is recorded. */
const UNRECORDED_ID = '00000000-0000-4000-8000-000000000000';

/** Resolves once the export is no longer queued or running. */
/** The path the SOURCES examples show for their SQLite file; the test sends its own. */
const SHOP_FILE_SHOWN = '/srv/quarry/sources/shop.sqlite';

async function sourceRunDone(params: { sourceId: string }): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'SOURCES.RUNS', params },
      { Authorization: `Bearer ${analyst().token}` },
    );
    const { result } = (await res.json()) as { result?: { data: { runs: Array<{ state: string }> } } };
    const state = result?.data.runs[0]?.state;
    if (state === 'done') return;
    if (state === 'failed') throw new Error(`the SOURCES.RUN example's run failed: ${JSON.stringify(result)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the SOURCES.RUN example’s run did not finish');
}

async function exportDone(exportId: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'EXPORTS.STATUS', params: { exportId } },
      { Authorization: `Bearer ${analyst().token}` },
    );
    const { result } = (await res.json()) as { result?: { data: { state: string } } };
    if (result && result.data.state !== 'queued' && result.data.state !== 'running') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`export ${exportId} did not finish`);
}

/** Records each example's live answer (result.data and result.meta) beside the calls method-examples.ts writes. */
function writeExamples(
  live: Partial<Record<MethodName, Array<{ data: unknown; meta: Record<string, unknown> }>>>,
): void {
  const answers = Object.fromEntries(
    METHOD_NAMES.map((name) => [
      name,
      METHOD_EXAMPLES[name].map((e, i) => {
        const run = live[name]?.[i];
        return run ? { result: run.data, meta: run.meta } : { result: e.result, meta: e.meta };
      }),
    ]),
  );
  fs.writeFileSync(ANSWERS_FILE, `${JSON.stringify(answers, null, 2)}\n`);
}

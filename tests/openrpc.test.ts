import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { QuarryClient, QuarryError } from '@quarry/client';
import { METHODS, METHOD_NAMES, type MethodName } from '@quarry/contract';
import { METHOD_EXAMPLES } from '../packages/contract/src/method-examples';
import { useDemoStack } from './support/demo-stack';
import { createIdentity } from './support/identities';

/*
 * The API describes itself (docs/api.md is generated from the same document): rpc.discover and /openrpc.json
 * over real HTTP, the typed client against the real server, and each method's documented example run
 * as written, with the demo token, on exactly what `npm start` serves (scripts/sample-data.sh), every live
 * result validated by ajv against the method's result schema from the live document.
 * QUARRY_UPDATE_EXAMPLES=1 records the examples' answers from these calls (packages/contract/src/method-example-answers.json).
 */

// Required untyped: its types ship as .ts sources that do not compile under this repo's settings.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { validateOpenRPCDocument } = require('@open-rpc/schema-utils-js') as {
  validateOpenRPCDocument: (doc: unknown) => true | Error;
};

const demo = useDemoStack();
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

/** Guids and times change with every run; everything else an example shows must not. */
// An embed token (TOKENS.EMBED) is new with every call: signed, with its own id and times.
const JWT = /^eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function stable(value: unknown): unknown {
  if (typeof value === 'string')
    return GUID.test(value) ? '<guid>' : TIME.test(value) ? '<time>' : JWT.test(value) ? '<jwt>' : value;
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stable(v)]));
  return value;
}

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

/**
 * Examples that cannot run as written on a bare `npm start`: scheduling needs a destination the operator
 * configures (QUARRY_SMTP_URL or QUARRY_WEBHOOK_ALLOW), and removing one needs the id a schedule got.
 * tests/schedules.test.ts makes these calls on a configured server and checks their results.
 */
const NEEDS_CONFIGURATION: ReadonlySet<MethodName> = new Set(['REPORTS.SCHEDULE', 'REPORTS.UNSCHEDULE']);

describe('each method’s examples in the document are real calls on what npm start serves', () => {
  type Live = { data: unknown; meta: Record<string, unknown> };
  const live: Partial<Record<MethodName, Live[]>> = {};
  let document: LiveDocument;
  /** Every example of every method, as [method, position]. */
  const EXAMPLES = METHOD_NAMES.filter((name) => !NEEDS_CONFIGURATION.has(name)).flatMap((name) =>
    METHOD_EXAMPLES[name].map((_, i) => [name, i] as const),
  );
  /** The examples not run here still show a result their schema accepts. */
  const SHOWN_ONLY = [...NEEDS_CONFIGURATION].flatMap((name) =>
    METHOD_EXAMPLES[name].map((_, i) => [name, i] as const),
  );

  beforeAll(async () => {
    document = (
      (await (await post({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' })).json()) as { result: LiveDocument }
    ).result;
    for (const m of document.methods) {
      if (NEEDS_CONFIGURATION.has(m.name)) {
        process.stderr.write(
          `openrpc: ${m.name}'s examples are not run here: they need a configured destination or id\n`,
        );
        continue;
      }
      live[m.name] = [];
      for (const example of m.examples) {
        // The params exactly as the document writes them, with the token npm start prints.
        const params = Object.fromEntries(example.params.map((p) => [p.name, p.value]));
        const res = await post(
          { jsonrpc: '2.0', id: 1, method: m.name, params },
          { Authorization: `Bearer ${analyst().token}`, 'X-Request-Id': 'example' },
        );
        const body = (await res.json()) as { result?: Live; error?: unknown };
        if (!body.result) throw new Error(`${m.name}'s example failed: ${JSON.stringify(body.error)}`);
        live[m.name]!.push(body.result);
      }
    }
    if (process.env.QUARRY_UPDATE_EXAMPLES === '1') writeExamples(live);
  });

  it('the document shows every example the contract holds', () => {
    expect(document.methods.map((m) => [m.name, m.examples.length])).toEqual(
      METHOD_NAMES.map((name) => [name, METHOD_EXAMPLES[name].length]),
    );
  });

  it.each(EXAMPLES)('%s example %i: the live result validates against the method’s result schema (ajv)', (name, i) => {
    const m = document.methods.find((x) => x.name === name)!;
    const validate = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(m.result.schema);
    validate(live[name]![i]);
    expect(validate.errors ?? []).toEqual([]);
    expect(METHODS[name].result.safeParse(live[name]![i].data).error).toBeUndefined();
  });

  it.each(SHOWN_ONLY)(
    '%s example %i (not run here): the shown result validates against the result schema',
    (name, i) => {
      const m = document.methods.find((x) => x.name === name)!;
      const shown = m.examples[i].result.value as { data: unknown };
      const validate = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(m.result.schema);
      validate(shown);
      expect(validate.errors ?? []).toEqual([]);
      expect(METHODS[name].result.safeParse(shown.data).error).toBeUndefined();
    },
  );

  it.each(EXAMPLES)('%s example %i: answers what the document shows', (name, i) => {
    const shown = document.methods.find((x) => x.name === name)!.examples[i].result.value;
    expect(stable(live[name]![i])).toEqual(stable(shown));
  });
});

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

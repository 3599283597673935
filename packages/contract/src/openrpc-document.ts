import { z } from 'zod';
import { ERROR_TABLE } from '@quarry/errors';
import { METHOD_EXAMPLES } from './method-examples';
import type { CacheStatus, Provenance } from './result-meta';
import { METHODS, METHOD_NAMES, type MethodContract, type MethodName } from './methods';
import { inlineComponents, shareRepeatedShapes, withoutUnionTypes, type Json } from './openrpc-components';

/*
 * The OpenRPC 1.3 document (https://spec.open-rpc.org) of the API, built from the contract alone, so
 * it cannot drift from what the gateway validates. JSON Schema draft-07, which the OpenRPC meta-schema
 * uses; refinements that JSON Schema cannot state are in each method's description.
 */

export interface OpenRpcDocument {
  openrpc: '1.3.2';
  info: { title: string; version: string; description: string };
  servers: Array<{ name: string; url: string }>;
  methods: Array<Record<string, Json>>;
  components: { schemas: { [name: string]: Json } };
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): { [key: string]: Json } {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as {
    [key: string]: Json;
  };
  return withoutUnionTypes(rest) as { [key: string]: Json };
}

/** One content descriptor per top-level param: OpenRPC's by-name params. */
function paramDescriptors(schema: z.ZodType): Json[] {
  const whole = jsonSchema(schema, 'input');
  const properties = (whole.properties ?? {}) as { [key: string]: { [key: string]: Json } };
  const required = new Set((whole.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    required: required.has(name),
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
    schema: s,
  }));
}

const provenanceMeta = z
  .strictObject({
    index: z.string(),
    version: z.number().int().meta({
      description: 'The index version the answer ran on (each load publishes the next; a published one never changes).',
    }),
    snapshot: z.string().nullable().meta({
      description:
        "The SHA-256 (hex) of that version's records file, computed when it was loaded; null for a version loaded before Quarry kept it.",
    }),
    engine: z.string().meta({ description: 'What computed it: duckdb, clickhouse or typesense.' }),
    servedBy: z
      .string()
      .nullable()
      .meta({ description: 'The rollup it was answered from; null when the records were read.' }),
    cached: z
      .boolean()
      .meta({ description: 'Whether it came from the result cache (computed earlier on the same version).' }),
  } satisfies { [K in keyof Provenance]: z.ZodType })
  .meta({ description: 'Which data gave this answer.' });

/**
 * The whole JSON-RPC `result` of a method, `{data, meta}`, so a generic client validates what it receives.
 * `meta.cache` exists only for the methods the result cache serves.
 */
export function resultSchema(m: MethodContract): z.ZodType {
  const meta = z
    .strictObject({
      requestId: z.string().meta({
        description: "The call's X-Request-Id (the caller's own when it is safe, else a generated one).",
      }),
      ...(m.cached
        ? {
            cache: z
              .enum(['hit', 'miss', 'bypass'] satisfies CacheStatus[])
              .optional()
              .meta({ description: 'How the result cache answered (bypass: cache: false was given).' }),
          }
        : {}),
      ...(m.rollups
        ? {
            servedBy: z.string().optional().meta({
              description:
                'The rollup the crosstab (or crosstab report) was answered from (`quarry index rollup add`); absent when it scanned the records or ran a search.',
            }),
          }
        : {}),
      ...(m.provenance ? { provenance: provenanceMeta } : {}),
      ...(m.replays
        ? {
            replay: z.string().optional().meta({
              description:
                'A signed token QUERIES.REPLAY answers the same data for, from the same index version, for this user only; absent for embed tokens and when it would be longer than 16,384 characters.',
            }),
          }
        : {}),
      ...(m.verifies
        ? {
            verify: z
              .strictObject({
                cells: z
                  .number()
                  .int()
                  .meta({ description: 'The values of every returned cell, subtotal and total recomputed.' }),
                mismatched: z
                  .number()
                  .int()
                  .meta({ description: 'How many of them the recomputation did not agree with (0: every one did).' }),
              })
              .optional()
              .meta({ description: 'With verify: true only.' }),
          }
        : {}),
    })
    .meta({ description: 'About the call, not its answer.' });
  return z.strictObject({ data: m.result, meta });
}

/** One error object per code, its `data` saying every case it covers. */
function errorObjects(m: MethodContract): Json[] {
  const byCode = new Map<number, string[]>();
  for (const e of m.errors) byCode.set(e.code, [...(byCode.get(e.code) ?? []), e.when]);
  const title = (code: number) => Object.values(ERROR_TABLE).find((r) => r.http === code)?.title ?? String(code);
  return [...byCode]
    .sort(([a], [b]) => a - b)
    .map(([code, whens]) => ({ code, message: title(code), data: { type: 'about:blank', when: whens } }));
}

function methodObject(name: MethodName): Record<string, Json> {
  const m: MethodContract = METHODS[name];
  return {
    name,
    summary: m.summary,
    description: `${m.description} ${m.scope === null ? 'Needs no scope: any API token may call it' : `Needs the ${m.scope} scope`}${m.alsoNeeds ? ` and the ${m.alsoNeeds} scope` : ''}${m.saves ? ' (and reports:write with saveReport)' : ''}.`,
    tags: [{ name: m.group }],
    paramStructure: 'by-name',
    params: paramDescriptors(m.params),
    result: {
      name: 'result',
      description: `The JSON-RPC result: data is the answer, meta carries requestId${m.cached ? ' and cache' : ''}.`,
      schema: jsonSchema(resultSchema(m), 'output'),
    },
    errors: errorObjects(m),
    ...(m.scope !== null ? { 'x-scope': m.scope } : {}),
    examples: METHOD_EXAMPLES[name].map((example) => ({
      name: example.name,
      description: example.setup
        ? `A real call on the data \`npm start\` serves (scripts/sample-data.sh), on a server where ${example.setup}; tests/openrpc.test.ts runs it.`
        : 'A real call on the data `npm start` serves (scripts/sample-data.sh); tests/openrpc.test.ts runs it as written.',
      params: Object.entries(example.params).map(([k, v]) => ({ name: k, value: v as Json })),
      result: { name: 'result', value: { data: example.result as Json, meta: example.meta as Json } },
    })),
  };
}

/** Every method's params and result with their repeated shapes named once under components/schemas. */
function sharedShapes(methods: Array<Record<string, Json>>): Pick<OpenRpcDocument, 'methods' | 'components'> {
  type Descriptor = { name: string; schema: Json };
  const schemas = new Map<string, Json>();
  for (const m of methods) {
    for (const p of m.params as unknown as Descriptor[]) schemas.set(`${String(m.name)} ${p.name}`, p.schema);
    schemas.set(`${String(m.name)} result`, (m.result as unknown as Descriptor).schema);
  }
  const shared = shareRepeatedShapes(schemas);
  const at = (key: string) => shared.schemas.get(key) ?? null;
  return {
    methods: methods.map((m) => ({
      ...m,
      params: (m.params as unknown as Descriptor[]).map((p) => ({ ...p, schema: at(`${String(m.name)} ${p.name}`) })),
      result: { ...(m.result as { [key: string]: Json }), schema: at(`${String(m.name)} result`) },
    })),
    components: { schemas: shared.components },
  };
}

/**
 * The document with every `$ref` to its components replaced by the schema it names: for readers that
 * walk each method's schemas on their own (the API docs, the client's types, tests).
 */
export function inlinedDocument(doc: OpenRpcDocument): OpenRpcDocument {
  const inline = (s: Json) => inlineComponents(s, doc.components.schemas);
  return {
    ...doc,
    methods: doc.methods.map((m) => ({
      ...m,
      params: (m.params as Array<{ [key: string]: Json }>).map((p) => ({ ...p, schema: inline(p.schema) })),
      result: { ...(m.result as { [key: string]: Json }), schema: inline((m.result as { schema: Json }).schema) },
    })),
    components: { schemas: {} },
  };
}

export function openRpcDocument(opts: { serverUrl: string; version: string }): OpenRpcDocument {
  return {
    openrpc: '1.3.2',
    info: {
      title: 'Quarry',
      version: opts.version,
      description:
        'Search, crosstab and saved reports over JSON-RPC 2.0 (POST, one request per call, params by name). Every method but rpc.discover needs `Authorization: Bearer <API token>`; a missing or bad token is an HTTP 401 application/problem+json outside the JSON-RPC envelope. Business errors carry the HTTP status as code and { type, detail } as data; protocol errors use -32700, -32600, -32601 and -32603.',
    },
    servers: [{ name: 'Quarry', url: opts.serverUrl }],
    ...sharedShapes(METHOD_NAMES.map(methodObject)),
  };
}

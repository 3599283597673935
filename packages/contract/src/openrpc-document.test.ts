import Ajv from 'ajv';
import fc from 'fast-check';
import { METHODS, METHOD_NAMES, type MethodName } from './methods';
import { inlinedDocument, openRpcDocument } from './openrpc-document';

type Schema = { [key: string]: unknown };

// Required untyped: its types ship as .ts sources that do not compile under this repo's settings.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MethodCallValidator, validateOpenRPCDocument } = require('@open-rpc/schema-utils-js') as {
  validateOpenRPCDocument: (doc: unknown) => true | Error;
  MethodCallValidator: new (doc: unknown) => {
    validate(method: string, params: Record<string, unknown>): unknown[] | Error;
  };
};

const doc = inlinedDocument(openRpcDocument({ serverUrl: 'http://localhost:8080/api/v1', version: '1.0.0' }));
const asOpenRpc: unknown = doc;
const validator = new MethodCallValidator(asOpenRpc);

/** What the document says of a call: every name it lists, each value valid against its schema. */
function documentAccepts(method: MethodName, params: Record<string, unknown>): boolean {
  const m = doc.methods.find((x) => x.name === method)!;
  const names = new Set((m.params as Array<{ name: string }>).map((p) => p.name));
  if (Object.keys(params).some((k) => !names.has(k))) return false;
  const errors = validator.validate(method, params);
  return Array.isArray(errors) && errors.length === 0;
}

/** What the gateway says: the contract's zod schema, ignoring only the cross-parameter rules. */
function contractAccepts(
  method: MethodName,
  params: Record<string, unknown>,
): { accepted: boolean; crossOnly: boolean } {
  const parsed = METHODS[method].params.safeParse(params);
  if (parsed.success) return { accepted: true, crossOnly: false };
  return {
    accepted: false,
    crossOnly: parsed.error.issues.every(
      (i) => i.code === 'custom' && (i.params as { crossParameter?: boolean } | undefined)?.crossParameter === true,
    ),
  };
}

/*
 * Values drawn from each param's own JSON Schema: mostly valid, sometimes just outside it (wrong type,
 * one past a bound, a character too many, a missing or unknown key), so both sides of every rule get
 * tried.
 */
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.string({ maxLength: 3 }),
  fc.constant([]),
  fc.constant({}),
);

function arbitraryFor(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const valid = validFor(schema, depth);
  return fc.oneof(
    { weight: 8, arbitrary: valid },
    { weight: 1, arbitrary: nearMiss(schema) },
    { weight: 1, arbitrary: wrongType },
  );
}

function nearMiss(schema: Schema): fc.Arbitrary<unknown> {
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const out: unknown[] = [1.5];
      if (typeof schema.minimum === 'number') out.push(schema.minimum - 1);
      if (typeof schema.maximum === 'number') out.push(schema.maximum + 1);
      return fc.constantFrom(...out);
    }
    case 'string':
      return typeof schema.maxLength === 'number'
        ? fc.constant('z'.repeat(schema.maxLength + 1))
        : fc.constantFrom('', '  ', 'Zz');
    case 'array':
      return fc.constant(
        typeof schema.maxItems === 'number' ? new Array(schema.maxItems + 1).fill(null) : 'not an array',
      );
    default:
      return fc.constant({ unknownKey: 1 });
  }
}

function validFor(schema: Schema, depth: number, strict = false): fc.Arbitrary<unknown> {
  const child = (s: Schema) => (strict || depth > 3 ? validFor(s, depth + 1, strict) : arbitraryFor(s, depth + 1));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map(child));
  switch (schema.type) {
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: (schema.minimum as number | undefined) ?? -1000,
        max: Math.min((schema.maximum as number | undefined) ?? 1000, 2_000_000),
      });
    case 'number':
      return fc.double({ noNaN: true, min: -1e6, max: 1e6 });
    case 'string': {
      const max = (schema.maxLength as number | undefined) ?? 20;
      const base =
        typeof schema.pattern === 'string'
          ? fc.stringMatching(new RegExp(schema.pattern))
          : fc.string({ maxLength: Math.min(max, 20) });
      return base.filter((s) => s.length <= max);
    }
    case 'array': {
      const items = schema.items as Schema;
      return fc.array(child(items), {
        minLength: (schema.minItems as number | undefined) ?? 0,
        maxLength: Math.min((schema.maxItems as number | undefined) ?? 3, 3),
      });
    }
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, s] of Object.entries(props)) record[k] = child(s);
      const optional = Object.keys(props).filter((k) => !required.includes(k));
      return fc
        .record(record, { requiredKeys: required.filter(() => true) as never[] })
        .map((v) => v)
        .chain((v) =>
          fc
            .subarray(optional)
            .map((keep) =>
              Object.fromEntries(Object.entries(v).filter(([k]) => required.includes(k) || keep.includes(k))),
            ),
        );
    }
    default:
      return fc.constant(null);
  }
}

/** Half the draws are valid throughout; the other half may miss anywhere (several places at once). */
function callArbitrary(method: MethodName): fc.Arbitrary<Record<string, unknown>> {
  const m = doc.methods.find((x) => x.name === method)!;
  const params = m.params as Array<{ name: string; required: boolean; schema: Schema }>;
  const draw = (of: (s: Schema) => fc.Arbitrary<unknown>) => {
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const p of params) record[p.name] = of(p.schema);
    return fc.record(record, { requiredKeys: params.filter((p) => p.required).map((p) => p.name) as never[] });
  };
  const valid = draw((s) => validFor(s, 0, true));
  const missing = fc
    .tuple(
      draw((s) => arbitraryFor(s)),
      fc.boolean(),
      fc.boolean(),
    )
    .map(([v, dropOne, addUnknown]) => {
      const out: Record<string, unknown> = { ...v };
      const required = params.filter((p) => p.required);
      if (dropOne && required.length) delete out[required[0].name];
      if (addUnknown) out.notAParam = 1;
      return out;
    });
  return fc.oneof(valid as fc.Arbitrary<Record<string, unknown>>, missing);
}

describe('the OpenRPC document', () => {
  it('is a valid OpenRPC 1.3 document', () => {
    expect(validateOpenRPCDocument(asOpenRpc)).toBe(true);
  });

  it('lists every method of the contract with its scope, params, result, errors and an example', () => {
    expect(doc.methods.map((m) => m.name)).toEqual(METHOD_NAMES);
    for (const m of doc.methods) {
      // A method any token may call (TOKENS.WHOAMI) names no scope.
      expect(m['x-scope']).toBe(METHODS[m.name as MethodName].scope ?? undefined);
      expect((m.errors as Array<{ code: number }>).map((e) => e.code)).toEqual(
        expect.arrayContaining([400, 403, 503, 504]),
      );
      expect((m.examples as unknown[]).length).toBeGreaterThanOrEqual(1);
    }
  });

  it('states limits and defaults: pageSize 1-1000 defaulting to 50, a chart 100-4000 wide defaulting to 800', () => {
    const param = (method: string, name: string) =>
      (doc.methods.find((m) => m.name === method)!.params as Array<{ name: string; schema: Schema }>).find(
        (p) => p.name === name,
      )!.schema;
    expect(param('QUERIES.EXECUTE', 'pageSize')).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 50,
    });
    expect(param('CROSSTAB.EXECUTE', 'width')).toMatchObject({
      type: 'integer',
      minimum: 100,
      maximum: 4000,
      default: 800,
    });
  });

  // Each example call is run against the real server by tests/openrpc.test.ts; here it must at least
  // be a call the contract accepts.
  it.each(METHOD_NAMES)('%s: every example’s params pass the contract and the document', (name) => {
    const examples = doc.methods.find((m) => m.name === name)!.examples as Array<{
      params: Array<{ name: string; value: unknown }>;
    }>;
    for (const example of examples) {
      const params = Object.fromEntries(example.params.map((p) => [p.name, p.value]));
      expect(contractAccepts(name, params).accepted).toBe(true);
      expect(documentAccepts(name, params)).toBe(true);
    }
  });

  it.each(METHOD_NAMES)(
    '%s: the document accepts exactly the calls the contract accepts (but for cross-parameter rules)',
    (name) => {
      let accepted = 0;
      let refused = 0;
      fc.assert(
        fc.property(callArbitrary(name), (params) => {
          const contract = contractAccepts(name, params);
          const document = documentAccepts(name, params);
          // Counted on the document's side: the crosstab's cross-parameter rules refuse many valid draws.
          if (document) accepted++;
          else refused++;
          // A call only a cross-parameter rule refuses is one JSON Schema cannot see; the description says it.
          if (contract.crossOnly) return document === true;
          return contract.accepted === document;
        }),
        { numRuns: 400 },
      );
      // Both sides were tried: the property is not vacuous.
      expect(accepted).toBeGreaterThan(10);
      expect(refused).toBeGreaterThan(10);
    },
  );

  it.each(METHOD_NAMES)('%s: the result schema is the whole JSON-RPC result, {data, meta} and nothing else', (name) => {
    const result = doc.methods.find((m) => m.name === name)!.result as { name: string; schema: Schema };
    expect(result.name).toBe('result');
    expect(result.schema).toMatchObject({ type: 'object', required: ['data', 'meta'], additionalProperties: false });
    const meta = (result.schema.properties as { meta: Schema }).meta;
    // Every answer of a method that runs on an index version says which data gave it.
    expect(meta).toMatchObject({
      required: ['requestId', ...(METHODS[name].provenance ? ['provenance'] : [])],
      additionalProperties: false,
    });
    expect(Object.keys(meta.properties as Schema)).toEqual([
      'requestId',
      ...(METHODS[name].cached ? ['cache'] : []),
      ...(METHODS[name].rollups ? ['servedBy'] : []),
      ...(METHODS[name].provenance ? ['provenance'] : []),
      ...(METHODS[name].replays ? ['replay'] : []),
      ...(METHODS[name].verifies ? ['verify'] : []),
    ]);
  });

  it.each(METHOD_NAMES)('%s: every example result validates against its result schema (ajv)', (name) => {
    const m = doc.methods.find((x) => x.name === name)!;
    const validate = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(
      (m.result as { schema: Schema }).schema,
    );
    for (const { result } of m.examples as Array<{ result: { value: unknown } }>) {
      validate(result.value);
      expect(validate.errors ?? []).toEqual([]);
      expect(validate({ ...(result.value as object), extra: 1 })).toBe(false);
    }
  });
});

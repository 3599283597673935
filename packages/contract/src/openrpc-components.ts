/*
 * What makes the OpenRPC document readable by strict tools: no union `type` arrays (ajv's strict mode
 * refuses them), and every shape that repeats stated once under `components/schemas`, referenced with
 * `$ref`. Quarry's own readers of the document (the API docs, the client's types) inline it again.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords that apply to one JSON type: a union's branch takes those of its type. */
const TYPE_KEYWORDS: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'minItems', 'maxItems', 'uniqueItems', 'additionalItems', 'contains'],
  object: ['properties', 'required', 'additionalProperties', 'propertyNames', 'minProperties', 'maxProperties'],
};

/** `{type: [a, b], …}` as `{anyOf: [{type: a, …}, {type: b, …}]}`, everywhere in a schema. */
export function withoutUnionTypes(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutUnionTypes);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) out[k] = withoutUnionTypes(v);
  if (!Array.isArray(out.type) || out.anyOf !== undefined) return out;
  const types = out.type as string[];
  const { type: _types, ...rest } = out;
  const shared: JsonObject = {};
  const specific = new Set(Object.values(TYPE_KEYWORDS).flat());
  for (const [k, v] of Object.entries(rest)) if (!specific.has(k)) shared[k] = v;
  const branches = types.map((t) => {
    const branch: JsonObject = { type: t };
    for (const k of TYPE_KEYWORDS[t] ?? []) if (rest[k] !== undefined) branch[k] = rest[k];
    return branch;
  });
  return { ...shared, anyOf: branches };
}

/** Shapes worth a name: a repeated object, array or union of at least this much JSON text. */
const MIN_SHARED_CHARS = 120;
/** Each round names the largest repeated shape; a document has a few dozen at most. */
const MAX_ROUNDS = 500;

const REF_PREFIX = '#/components/schemas/';

/** `CROSSTAB.EXECUTE` → CrosstabExecute, `rows item` → RowsItem, `dataPoints` → DataPoints. */
const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => (w === w.toUpperCase() ? w[0] + w.slice(1).toLowerCase() : w[0].toUpperCase() + w.slice(1)))
    .join('') || 'Shape';

interface Seen {
  count: number;
  /** Where it first stood: the property it describes names it when it has no title. */
  name: string;
  /** The method it first stood in: a name two shapes share is told apart by it. */
  method: string;
}

/** `where` is `<METHOD> <param or result>`, or a component's name. */
function survey(root: Json, where: string, seen: Map<string, Seen>): void {
  const space = where.indexOf(' ');
  const method = space > 0 ? where.slice(0, space) : '';
  const walk = (node: Json, name: string, top: boolean) => {
    if (Array.isArray(node)) {
      node.forEach((n) => walk(n, name, false));
      return;
    }
    if (!isObject(node)) return;
    if (!top && (node.type === 'object' || node.type === 'array' || node.anyOf !== undefined)) {
      const text = JSON.stringify(node);
      // A shape that points into its own schema's definitions cannot move out of it.
      if (text.length >= MIN_SHARED_CHARS && !text.includes('"$ref":"#/definitions/')) {
        const s = seen.get(text);
        if (s) s.count++;
        else seen.set(text, { count: 1, name: typeof node.title === 'string' ? node.title : name, method });
      }
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && isObject(v)) for (const [p, s] of Object.entries(v)) walk(s, p, false);
      else if (k === 'items') walk(v, `${name} item`, false);
      else walk(v, name, false);
    }
  };
  walk(root, space > 0 ? where.slice(space + 1) : where, true);
}

function replaceShape(node: Json, text: string, ref: JsonObject, top: boolean): Json {
  if (Array.isArray(node)) return node.map((n) => replaceShape(n, text, ref, false));
  if (!isObject(node)) return node;
  if (!top && JSON.stringify(node) === text) return ref;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) out[k] = replaceShape(v, text, ref, false);
  return out;
}

/**
 * Names every shape that repeats across the given schemas (largest first) under components/schemas and
 * puts a `$ref` where each stood. `schemas` maps a place (`CROSSTAB.EXECUTE params`) to its schema.
 */
export function shareRepeatedShapes(schemas: Map<string, Json>): {
  schemas: Map<string, Json>;
  components: JsonObject;
} {
  let current = new Map(schemas);
  const components: JsonObject = {};
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const seen = new Map<string, Seen>();
    for (const [where, s] of current) survey(s, where, seen);
    for (const [name, s] of Object.entries(components)) survey(s, name, seen);
    let best: [string, Seen] | undefined;
    for (const entry of seen) if (entry[1].count > 1 && (!best || entry[0].length > best[0].length)) best = entry;
    if (!best) break;
    const [text, { name, method }] = best;
    let id = pascal(name);
    if (components[id] !== undefined) id = `${pascal(method)}${id}`;
    for (let n = 2; components[id] !== undefined; n++) id = `${pascal(method)}${pascal(name)}${n}`;
    const ref = { $ref: `${REF_PREFIX}${id}` };
    current = new Map([...current].map(([where, s]) => [where, replaceShape(s, text, ref, true)]));
    for (const [k, s] of Object.entries(components)) components[k] = replaceShape(s, text, ref, true);
    components[id] = JSON.parse(text) as Json;
  }
  return { schemas: current, components };
}

/** A schema with every `#/components/schemas/…` reference replaced by what it names (for readers that walk schemas). */
export function inlineComponents(node: Json, components: JsonObject, depth = 0): Json {
  if (depth > 64) throw new Error('components reference each other too deeply');
  if (Array.isArray(node)) return node.map((n) => inlineComponents(n, components, depth));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string' && node.$ref.startsWith(REF_PREFIX)) {
    const target = components[node.$ref.slice(REF_PREFIX.length)];
    if (target === undefined) throw new Error(`no component for ${node.$ref}`);
    return inlineComponents(target, components, depth + 1);
  }
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) out[k] = inlineComponents(v, components, depth);
  return out;
}

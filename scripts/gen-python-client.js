#!/usr/bin/env node
// Writes clients/python/quarry_client/_generated.py from the contract's OpenRPC document: a TypedDict for
// every object a method takes or answers, and one typed method per JSON-RPC method, grouped as the
// TypeScript client groups them (`quarry.crosstab.execute(...)`). The transport, errors, retries, paging
// and downloads are hand-written in _client.py. `npm run gen:client` (after building the contract);
// tests/python-client.test.ts fails when the file is stale.
const fs = require('node:fs');
const path = require('node:path');
const contract = require('@quarry/contract');
const { NEVER_RETRIED } = require('@quarry/client');

const OUT = path.join(__dirname, '..', 'clients', 'python', 'quarry_client', '_generated.py');

/** Methods the gateway keeps under an Idempotency-Key (docs/api.md; searches and crosstabs only with saveReport). */
const KEYED = ['REPORTS.SCHEDULE', 'EXPORTS.START', 'SOURCES.RUN', 'QUERIES.EXECUTE', 'CROSSTAB.EXECUTE'];

const PY_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);
const pascal = (s) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
/** QUERIES.EXECUTE -> QueriesExecute */
const typeName = (method) => pascal(method.toLowerCase().replace(/_/g, ' '));
const snake = (s) => s.toLowerCase();
const isIdentifier = (s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) && !PY_KEYWORDS.has(s);
const pyString = (s) => JSON.stringify(s);
const literal = (v) =>
  v === null
    ? 'None'
    : typeof v === 'boolean'
      ? v
        ? 'True'
        : 'False'
      : typeof v === 'string'
        ? pyString(v)
        : String(v);

/** A docstring's text: no triple quotes, no backslashes Python would read as escapes. */
const doc = (s) =>
  String(s ?? '')
    .replace(/\\/g, '\\\\')
    .replace(/"""/g, '\\"\\"\\"');

/** Wraps words at width, each line prefixed. */
function wrap(text, width, prefix) {
  const out = [];
  for (const para of String(text).split('\n')) {
    let line = '';
    for (const word of para.split(/\s+/).filter(Boolean)) {
      if (line && (prefix + line + ' ' + word).length > width) {
        out.push(prefix + line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    out.push(prefix + line);
  }
  return out;
}

/** What a schema says of its limits and default, for a docstring. */
function limitsOf(s) {
  const parts = [];
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  if (s.minimum !== undefined && s.maximum !== undefined && s.maximum < 9e15)
    parts.push(`${s.minimum} to ${s.maximum}`);
  if (s.maxLength !== undefined) parts.push(`at most ${s.maxLength} characters`);
  if (s.maxItems !== undefined) parts.push(`at most ${s.maxItems} items`);
  return parts.join('; ');
}

class Emitter {
  constructor() {
    this.blocks = [];
    this.names = new Set();
    this.shapes = new Map();
  }

  unique(name) {
    let n = name;
    for (let i = 2; this.names.has(n); i++) n = `${name}${i}`;
    this.names.add(n);
    return n;
  }

  /** The Python type of a JSON Schema, emitting a TypedDict for each object with properties. */
  type(s, hint) {
    if (!s || typeof s !== 'object' || Object.keys(s).length === 0) return 'Any';
    if (s.const !== undefined) return `Literal[${literal(s.const)}]`;
    if (Array.isArray(s.enum)) {
      const values = s.enum.filter((v) => v !== null).map(literal);
      const lit = values.length ? `Literal[${values.join(', ')}]` : 'None';
      return s.enum.includes(null) && values.length ? `Optional[${lit}]` : lit;
    }
    const alternatives = s.anyOf ?? s.oneOf;
    if (Array.isArray(alternatives)) {
      const types = [];
      alternatives.forEach((a, i) => {
        const t = this.type(a, a.title ?? `${hint}${i + 1}`);
        if (!types.includes(t)) types.push(t);
      });
      return types.length === 1 ? types[0] : `Union[${types.join(', ')}]`;
    }
    if (Array.isArray(s.type)) {
      const types = [...new Set(s.type.map((t) => this.type({ ...s, type: t }, hint)))];
      return types.length === 1 ? types[0] : `Union[${types.join(', ')}]`;
    }
    switch (s.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `List[${this.type(s.items, `${hint}Item`)}]`;
      case 'object':
        if (s.properties && Object.keys(s.properties).length) return this.typedDict(s, s.title ?? hint);
        if (s.additionalProperties && typeof s.additionalProperties === 'object')
          return `Dict[str, ${this.type(s.additionalProperties, `${hint}Value`)}]`;
        return 'Dict[str, Any]';
      default:
        return 'Any';
    }
  }

  typedDict(s, hint) {
    const base = pascal(s.title ?? hint);
    const required = new Set(s.required ?? []);
    const fields = Object.entries(s.properties).map(([key, prop]) => ({
      key,
      type: this.type(prop, `${base}${pascal(key)}`),
      required: required.has(key),
      doc: [prop.description, limitsOf(prop)].filter(Boolean).join(' — '),
    }));
    // One class per shape as Python sees it (keys, their types, which are required): the same object in
    // several methods (a total, a range's {from, to}) is one TypedDict, named where it first appears; a
    // titled one (a method's result) keeps its own name as an alias.
    const shape = JSON.stringify(fields.map((f) => [f.key, f.type, f.required]));
    const known = this.shapes.get(shape);
    if (known && s.title && !this.names.has(base)) {
      const alias = this.unique(base);
      this.blocks.push(`${alias} = ${known}`);
      return alias;
    }
    if (known) return known;
    const name = this.unique(base);
    this.shapes.set(shape, name);
    const lines = [];
    const describe = s.description ? wrap(doc(s.description), 110, '    ') : [];
    const allNamed = fields.every((f) => isIdentifier(f.key));
    const mixed = fields.some((f) => f.required) && fields.some((f) => !f.required);
    if (allNamed) {
      // Required keys in a base, optional ones in a total=False subclass: Python 3.9 has no NotRequired.
      const body = (list) =>
        list.length
          ? list.flatMap((f) => [...(f.doc ? wrap(f.doc, 110, '    #: ') : []), `    ${f.key}: ${f.type}`])
          : ['    pass'];
      const req = fields.filter((f) => f.required);
      const opt = fields.filter((f) => !f.required);
      if (mixed) {
        lines.push(`class _${name}Required(TypedDict):`, ...body(req), '', '');
        lines.push(`class ${name}(_${name}Required, total=False):`);
        if (describe.length) lines.push('    """', ...describe, '    """', '');
        lines.push(...body(opt));
      } else {
        lines.push(`class ${name}(TypedDict${req.length ? '' : ', total=False'}):`);
        if (describe.length) lines.push('    """', ...describe, '    """', '');
        lines.push(...body(fields));
      }
    } else {
      // A key Python cannot name (`from`): the functional form, every key optional when they mix.
      lines.push(`${name} = TypedDict(`, `    ${pyString(name)},`, '    {');
      for (const f of fields) lines.push(`        ${pyString(f.key)}: ${f.type},`);
      lines.push('    },', `    total=${mixed || fields.every((f) => !f.required) ? 'False' : 'True'},`, ')');
    }
    this.blocks.push(lines.join('\n'));
    return name;
  }
}

/** The array a paged result holds beside nextCursor, when a method is paged by cursor. */
function pagedItems(method) {
  const data = method.result.schema.properties.data;
  if (!method.params.some((p) => p.name === 'cursor') || !data.properties?.nextCursor) return undefined;
  const arrays = Object.entries(data.properties).filter(([, s]) => s.type === 'array');
  return arrays.length === 1 ? arrays[0][0] : undefined;
}

function generate() {
  const document = contract.inlinedDocument(
    contract.openRpcDocument({ serverUrl: 'http://localhost/api/v1', version: '0' }),
  );
  const emitter = new Emitter();
  const groups = new Map();
  for (const m of document.methods) {
    const name = typeName(m.name);
    const params = m.params.map((p) => {
      // A parameter whose schema admits null means something by null (SOURCES.UPDATE refresh: none any
      // more), so "not given" is UNSET there; elsewhere None is "not given".
      const nullable = JSON.stringify(p.schema.anyOf ?? []).includes('"type":"null"');
      return {
        name: p.name,
        arg: isIdentifier(p.name) ? p.name : `${p.name}_`,
        required: p.required === true,
        nullable,
        type: emitter.type(p.schema, `${name}${pascal(p.name)}`),
        doc: [p.description ?? p.schema.description, limitsOf(p.schema)].filter(Boolean).join(' — '),
      };
    });
    const data = m.result.schema.properties.data;
    const result = emitter.type(data, data.title ?? `${name}Result`);
    const items = pagedItems(m);
    const itemType = items ? emitter.type(data.properties[items].items, `${name}Item`) : undefined;
    const [group, verb] = m.name.split('.');
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push({ method: m, verb, params, result, items, itemType });
  }

  const out = [
    '# Generated by scripts/gen-python-client.js from @quarry/contract (the OpenRPC document). Do not edit.',
    '# flake8: noqa',
    '"""The contract\'s types and one typed method per JSON-RPC method; see _client.py for the transport."""',
    '',
    'from __future__ import annotations',
    '',
    'from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Literal, Optional, TypedDict, Union, cast',
    '',
    'from ._runtime import UNSET, Unset, params_of',
    '',
    'if TYPE_CHECKING:',
    '    from ._client import QuarryClient',
    '',
    `#: Methods of the contract, in its order.`,
    `METHOD_NAMES = (${document.methods.map((m) => pyString(m.name)).join(', ')},)`,
    `#: Methods that change what is stored: retried only under an Idempotency-Key the server keeps.`,
    `NEVER_RETRIED = frozenset((${NEVER_RETRIED.map(pyString).join(', ')},))`,
    `#: Methods that take an Idempotency-Key (QUERIES.EXECUTE and CROSSTAB.EXECUTE only with saveReport).`,
    `KEYED_METHODS = frozenset((${KEYED.map(pyString).join(', ')},))`,
    '',
    '',
  ];
  out.push(emitter.blocks.join('\n\n\n'), '', '');
  out.push(
    'class _Group:',
    '    """A group of methods, calling through the client."""',
    '',
    '    def __init__(self, client: "QuarryClient") -> None:',
    '        self._client = client',
    '',
    '',
  );

  for (const [group, methods] of groups) {
    const cls = `${pascal(group.toLowerCase())}Methods`;
    out.push(`class ${cls}(_Group):`, `    """${group}.* methods (\`quarry.${snake(group)}\`)."""`, '');
    for (const { method: m, verb, params, result, items, itemType } of methods) {
      const fn = snake(verb);
      const keyed = KEYED.includes(m.name);
      const args = ['self', '*'];
      for (const p of params.filter((q) => q.required)) args.push(`${p.arg}: ${p.type}`);
      for (const p of params.filter((q) => !q.required))
        args.push(p.nullable ? `${p.arg}: Union[${p.type}, Unset] = UNSET` : `${p.arg}: Optional[${p.type}] = None`);
      if (keyed) args.push('idempotency_key: Optional[str] = None');
      args.push('timeout: Optional[float] = None');
      const docLines = [
        ...wrap(doc(`${m.summary}`), 108, '        '),
        '',
        ...wrap(doc(m.description ?? ''), 108, '        '),
        '',
        ...wrap(`JSON-RPC method ${m.name}; needs the ${m['x-scope'] ?? 'any'} scope.`, 108, '        '),
      ];
      if (params.length) {
        docLines.push('', '        Args:');
        for (const p of params)
          docLines.push(
            ...wrap(doc(`${p.arg}: ${p.required ? '(required) ' : ''}${p.doc || ''}`), 108, '            '),
          );
      }
      if (keyed)
        docLines.push(
          '            idempotency_key: the Idempotency-Key header: the same key and params give the first answer again.',
        );
      docLines.push("            timeout: seconds for this call (the client's timeout otherwise).");
      const call = params.map((p) => `${pyString(p.name)}: ${p.arg}`).join(', ');
      const nullable = params.filter((p) => p.nullable).map((p) => pyString(p.name));
      const paramsOf = (given) => `params_of({${given}}${nullable.length ? `, (${nullable.join(', ')},)` : ''})`;
      out.push(`    def ${fn}(${args.join(', ')}) -> ${result}:`);
      out.push('        """', ...docLines, '        """');
      out.push(
        `        data = self._client._data(${pyString(m.name)}, ${paramsOf(call)}, ${keyed ? 'idempotency_key' : 'None'}, timeout)`,
      );
      out.push(`        return cast(${pyString(result)}, data)`, '');
      if (items) {
        const pagedArgs = args.filter((a) => !a.startsWith('cursor'));
        const passed = params
          .filter((p) => p.name !== 'cursor')
          .map((p) => `${pyString(p.name)}: ${p.arg}`)
          .join(', ');
        out.push(`    def ${fn}_all(${pagedArgs.join(', ')}) -> Iterator[${itemType}]:`);
        out.push(
          '        """',
          `        Every ${items} item of every page of ${m.name}, following nextCursor until it is null.`,
          '        Pages are asked for as the iterator is read.',
          '        """',
        );
        out.push(
          `        for item in self._client.paginate(${pyString(m.name)}, ${paramsOf(passed)}, ${pyString(items)}, timeout=timeout):`,
          `            yield cast(${pyString(itemType)}, item)`,
          '',
        );
      }
    }
    out.push('');
  }
  out.push('class GeneratedMethods:', '    """Every group of methods, as attributes of the client."""', '');
  out.push('    def __init__(self, client: "QuarryClient") -> None:');
  for (const group of groups.keys())
    out.push(`        self.${snake(group)} = ${pascal(group.toLowerCase())}Methods(client)`);
  out.push('');
  return out.join('\n');
}

module.exports = { generate, OUT };

if (require.main === module) {
  const text = generate();
  if (process.argv.includes('--stdout')) process.stdout.write(text);
  else {
    fs.writeFileSync(OUT, text);
    process.stdout.write(`wrote ${path.relative(process.cwd(), OUT)}\n`);
  }
}

/**
 * TEST-ONLY ORACLE: the query parser as it was before the hand-written one replaced it (lucene's PEG
 * parser plus the compiler of that time), kept verbatim so parse-query.equivalence.test.ts can compare
 * the two. Never import it from production code: the PEG parser is exponential on nested groups.
 * Changes to the copy: the lucene typing lives here (the package ships none), the export is renamed,
 * and parseDateValue's new 'out-of-range' result is refused like a non-date.
 */
import { AppError } from '@quarry/errors';
import { parseDateValue } from '../src/date-values';
import { and, foldCase, not, or, words, type CompareOp, type Literal, type QueryNode } from '../src/query-node';
import { FieldResolver, isNumeric, type FieldDef } from '../src/schema';

// eslint-disable-next-line @typescript-eslint/no-namespace
namespace lucene {
  export interface Location {
    start: { offset: number; line: number; column: number };
    end: { offset: number; line: number; column: number };
  }
  export interface TermNode {
    field: string;
    fieldLocation: Location | null;
    term: string;
    quoted: boolean;
    regex: boolean;
    termLocation: Location;
    similarity?: number | null;
    proximity?: number | null;
    boost: number | null;
    prefix: '+' | '-' | null;
  }
  export interface RangeNode {
    field: string;
    fieldLocation: Location | null;
    term_min: string;
    term_max: string;
    inclusive: 'both' | 'none' | 'left' | 'right';
  }
  export interface BinaryNode {
    left: AstNode;
    operator?: string;
    right?: AstNode;
    start?: string;
    parenthesized?: boolean;
    field?: string;
    fieldLocation?: Location | null;
  }
  export type AstNode = TermNode | RangeNode | BinaryNode;
  export interface SyntaxError extends Error {
    location?: Location;
  }
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const luceneParser = require('lucene') as { parse(query: string): lucene.AstNode };

interface ParseOptions {
  fields: readonly FieldDef[];
  /** The instant date tokens (NOW, TODAY-7DAYS) are relative to. */
  now: number;
}

const MAX_QUERY_DEPTH = 64;

const IMPLICIT = '<implicit>';

interface Rewritten {
  text: string;
  /** Offset in the user's text for each offset of `text`. */
  origin: number[];
}

/**
 * Quarry's query language writes fields with spaces as `(Field With Spaces):value`; the Lucene grammar spells that
 * `Field\ With\ Spaces:value`. Rewrite the one into the other, remembering where each character came from.
 */
function rewriteFieldGroups(query: string): Rewritten {
  const out: string[] = [];
  const origin: number[] = [];
  const re = /\(([^()":\\]+)\)(\s*):/g;
  let last = 0;
  for (const m of query.matchAll(re)) {
    const at = m.index;
    for (let i = last; i < at; i++) {
      out.push(query[i]);
      origin.push(i);
    }
    const name = m[1].trim();
    const nameStart = at + 1 + m[1].indexOf(name);
    for (let i = 0; i < name.length; i++) {
      const ch = name[i];
      if (/[\s+\-&|!(){}[\]^"~*?:\\/]/.test(ch)) {
        out.push('\\');
        origin.push(nameStart + i);
      }
      out.push(ch);
      origin.push(nameStart + i);
    }
    out.push(':');
    origin.push(at + m[0].length - 1);
    last = at + m[0].length;
  }
  for (let i = last; i < query.length; i++) {
    out.push(query[i]);
    origin.push(i);
  }
  origin.push(query.length);
  return { text: out.join(''), origin };
}

/** The grammar has no `-(group)`: spell it `NOT (group)` (and drop a redundant `+`). */
function rewriteSignedGroups(rw: Rewritten): Rewritten {
  const out: string[] = [];
  const origin: number[] = [];
  let inQuote = false;
  for (let i = 0; i < rw.text.length; i++) {
    const ch = rw.text[i];
    if (ch === '"' && rw.text[i - 1] !== '\\') inQuote = !inQuote;
    const atStart = i === 0 || /[\s(]/.test(rw.text[i - 1]);
    if (!inQuote && atStart && (ch === '-' || ch === '+') && rw.text[i + 1] === '(') {
      const repl = ch === '-' ? 'NOT ' : '';
      for (const r of repl) {
        out.push(r);
        origin.push(rw.origin[i]);
      }
      continue;
    }
    out.push(ch);
    origin.push(rw.origin[i]);
  }
  origin.push(rw.origin[rw.text.length]);
  return { text: out.join(''), origin };
}

function syntaxError(position: number, what: string): AppError {
  return AppError.invalid(`Query syntax error at position ${position + 1}: ${what}`);
}

function checkDepth(query: string): void {
  let depth = 0;
  let inQuote = false;
  for (let i = 0; i < query.length; i++) {
    const ch = query[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '"') inQuote = !inQuote;
    if (inQuote) continue;
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    if (ch === ')' || ch === ']' || ch === '}') depth--;
    if (depth > MAX_QUERY_DEPTH) throw syntaxError(i, `parentheses nest deeper than ${MAX_QUERY_DEPTH} levels`);
  }
}

const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

function isTerm(n: lucene.AstNode): n is lucene.TermNode {
  return 'term' in n;
}
function isRange(n: lucene.AstNode): n is lucene.RangeNode {
  return 'term_min' in n;
}

/** Compiles Lucene-style text into the engine-neutral QueryNode, checking fields and value types. */
export function legacyParseQuery(query: string, opts: ParseOptions): QueryNode {
  const trimmed = query.trim();
  if (trimmed === '' || trimmed === '*' || trimmed === '*:*') return { kind: 'all' };
  checkDepth(trimmed);
  const rw = rewriteSignedGroups(rewriteFieldGroups(trimmed));
  const pos = (offset: number) => rw.origin[Math.min(Math.max(offset, 0), rw.origin.length - 1)];

  let ast: lucene.AstNode;
  try {
    ast = luceneParser.parse(rw.text);
  } catch (err) {
    const offset = (err as lucene.SyntaxError).location?.start.offset ?? 0;
    const found = rw.text[offset];
    throw syntaxError(pos(offset), found === undefined ? 'the query ends too early' : `unexpected "${found}"`);
  }
  const dangling = /(?:^|\s)(AND|OR|NOT|&&|\|\||!)\s*$/.exec(rw.text);
  if (dangling)
    throw syntaxError(pos(dangling.index + dangling[0].indexOf(dangling[1])), `nothing follows ${dangling[1]}`);

  return new Compiler(new FieldResolver(opts.fields), opts.now, pos).node(ast, null);
}

class Compiler {
  constructor(
    private readonly fields: FieldResolver,
    private readonly now: number,
    private readonly pos: (offset: number) => number,
  ) {}

  node(n: lucene.AstNode, field: string | null): QueryNode {
    if (isTerm(n)) return this.term(n, field);
    if (isRange(n)) return this.range(n, field);
    return this.binary(n, field);
  }

  private binary(n: lucene.BinaryNode, inherited: string | null): QueryNode {
    const field = n.field && n.field !== IMPLICIT ? unescape(n.field) : inherited;
    const negStart = n.start === 'NOT' || n.start === '!';
    const operands: QueryNode[] = [];
    const ops: Array<'and' | 'or'> = [];
    const first = this.node(n.left, field);
    operands.push(negStart ? not(first) : first);
    let cur: lucene.BinaryNode = n;
    // The grammar nests chains to the right without precedence; flatten them and apply NOT > AND > OR.
    while (cur.operator && cur.right) {
      const op = cur.operator.toUpperCase();
      const joined: 'and' | 'or' = op.startsWith('OR') || op === '||' ? 'or' : 'and';
      const negate = op.endsWith(' NOT');
      const right: lucene.AstNode = cur.right;
      const chainable =
        !isTerm(right) &&
        !isRange(right) &&
        right.operator &&
        !right.parenthesized &&
        !(right.field && right.field !== IMPLICIT);
      if (chainable) {
        const b = right as lucene.BinaryNode;
        const head = this.node(b.left, field);
        ops.push(joined);
        operands.push(negate !== (b.start === 'NOT' || b.start === '!') ? not(head) : head);
        cur = b;
      } else {
        const whole = this.node(right, field);
        ops.push(joined);
        operands.push(negate ? not(whole) : whole);
        break;
      }
    }
    const groups: QueryNode[][] = [[operands[0]]];
    ops.forEach((op, i) => {
      if (op === 'or') groups.push([operands[i + 1]]);
      else groups[groups.length - 1].push(operands[i + 1]);
    });
    return or(...groups.map((g) => and(...g)));
  }

  private resolve(name: string, offset: number): FieldDef {
    const f = this.fields.find(name);
    if (!f) throw AppError.invalid(`Unknown field "${name}" at position ${this.pos(offset) + 1}`);
    return f;
  }

  private term(n: lucene.TermNode, inherited: string | null): QueryNode {
    const at = n.termLocation.start.offset;
    if (n.regex) throw AppError.invalid(`Regular expressions are not supported (position ${this.pos(at) + 1})`);
    if (n.similarity !== null && n.similarity !== undefined)
      throw AppError.invalid(`Fuzzy search (~) is not supported (position ${this.pos(at) + 1})`);
    if (n.proximity !== null && n.proximity !== undefined)
      throw AppError.invalid(`Proximity search (~) is not supported (position ${this.pos(at) + 1})`);
    // The grammar leaves the +/- of `-Field:value` on the field name.
    const sign = /^[+-]/.exec(n.field)?.[0] ?? n.prefix;
    const rawField = n.field === IMPLICIT ? null : n.field.replace(/^[+-]/, '');
    const fieldName = rawField === null ? inherited : unescape(rawField);
    const leaf = this.leaf(
      fieldName,
      n.quoted ? n.term : unescape(n.term),
      n.quoted,
      n.fieldLocation?.start.offset ?? at,
      at,
    );
    return sign === '-' ? not(leaf) : leaf;
  }

  private leaf(fieldName: string | null, raw: string, quoted: boolean, fieldAt: number, at: number): QueryNode {
    if (fieldName === null) {
      if (!quoted && raw === '*') return { kind: 'all' };
      if (!quoted && /^[<>]=?/.test(raw))
        throw AppError.invalid(`A comparison needs a field, as in Field:${raw} (position ${this.pos(at) + 1})`);
      return this.match(
        this.fields.textFields().map((f) => f.name),
        raw,
        quoted,
        at,
      );
    }
    const field = this.resolve(fieldName, fieldAt);
    if (!quoted && raw === '*') return { kind: 'exists', field: field.name, fieldType: field.type };
    const cmp = quoted ? null : /^(>=|<=|>|<)(.*)$/.exec(raw);
    if (cmp) {
      const op = ({ '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' } as const)[cmp[1] as '>' | '>=' | '<' | '<='];
      return this.compare(field, op, cmp[2], at);
    }
    if (field.type === 'string') return this.match([field.name], raw, quoted, at);
    return this.compare(field, 'eq', raw, at);
  }

  private match(fields: string[], raw: string, quoted: boolean, at: number): QueryNode {
    let text = raw;
    let prefix = false;
    if (!quoted) {
      if (/[?]|\*(?=.)/.test(text))
        throw AppError.invalid(
          `Wildcards are only supported at the end of a word, as in foo* (position ${this.pos(at) + 1})`,
        );
      if (text.endsWith('*')) {
        prefix = true;
        text = text.slice(0, -1);
      }
    }
    const ws = words(text);
    if (ws.length === 0) {
      if (prefix)
        return fields.length
          ? or(...fields.map((f) => ({ kind: 'exists', field: f, fieldType: 'string' }) as QueryNode))
          : { kind: 'none' };
      throw AppError.invalid(`"${raw}" has no letters or digits to search for (position ${this.pos(at) + 1})`);
    }
    if (fields.length === 0) return { kind: 'none' };
    return { kind: 'match', fields, words: ws, prefix };
  }

  private literal(field: FieldDef, raw: string, at: number): Literal | { type: 'period'; start: number; end: number } {
    const bad = (what: string) =>
      AppError.invalid(
        `Type mismatch at position ${this.pos(at) + 1}: field "${field.name}" is ${what}, but "${raw}" is not`,
      );
    if (isNumeric(field.type)) {
      if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw.trim())) throw bad('a number');
      return { type: 'number', value: Number(raw) };
    }
    if (field.type === 'boolean') {
      const v = raw.trim().toLowerCase();
      if (['true', 'yes', '1'].includes(v)) return { type: 'boolean', value: true };
      if (['false', 'no', '0'].includes(v)) return { type: 'boolean', value: false };
      throw bad('a boolean (true or false)');
    }
    if (field.type === 'date') {
      const d = parseDateValue(raw, this.now);
      if (!d || d === 'out-of-range') throw bad('a date (2001-01-14, 2001-01-14T09:30, TODAY-7DAYS, ...)');
      return d.precision === 'instant'
        ? { type: 'date', value: d.start }
        : { type: 'period', start: d.start, end: d.end };
    }
    return { type: 'string', value: foldCase(raw) };
  }

  private cmp(field: FieldDef, op: CompareOp, value: Literal): QueryNode {
    return { kind: 'compare', field: field.name, fieldType: field.type, op, value };
  }

  private compare(field: FieldDef, op: CompareOp, raw: string, at: number): QueryNode {
    const lit = this.literal(field, raw, at);
    if (lit.type !== 'period') return this.cmp(field, op, lit);
    const start: Literal = { type: 'date', value: lit.start };
    const end: Literal = { type: 'date', value: lit.end };
    switch (op) {
      case 'eq':
        return and(this.cmp(field, 'gte', start), this.cmp(field, 'lt', end));
      case 'gt':
        return this.cmp(field, 'gte', end);
      case 'gte':
        return this.cmp(field, 'gte', start);
      case 'lt':
        return this.cmp(field, 'lt', start);
      case 'lte':
        return this.cmp(field, 'lt', end);
    }
  }

  private range(n: lucene.RangeNode, inherited: string | null): QueryNode {
    const at = n.fieldLocation?.start.offset ?? 0;
    const sign = /^[+-]/.exec(n.field)?.[0];
    const name = n.field === IMPLICIT ? inherited : unescape(n.field.replace(/^[+-]/, ''));
    if (name === null)
      throw AppError.invalid(`A range needs a field, as in Year:[1990 TO 2000] (position ${this.pos(at) + 1})`);
    const field = this.resolve(name, at);
    const lowInc = n.inclusive === 'both' || n.inclusive === 'left';
    const highInc = n.inclusive === 'both' || n.inclusive === 'right';
    const parts: QueryNode[] = [];
    if (n.term_min !== '*') parts.push(this.compare(field, lowInc ? 'gte' : 'gt', unescape(n.term_min), at));
    if (n.term_max !== '*') parts.push(this.compare(field, highInc ? 'lte' : 'lt', unescape(n.term_max), at));
    const node: QueryNode = parts.length ? and(...parts) : { kind: 'exists', field: field.name, fieldType: field.type };
    return sign === '-' ? not(node) : node;
  }
}

import { AppError, quoteInput } from '@quarry/errors';
import { parseDateValue } from './date-values';
import { unescapeQueryText, type Bound } from './query-lexer';
import type { FieldRef, QueryAst } from './query-parser';
import {
  and,
  DATE_PARTS,
  foldCase,
  not,
  or,
  words,
  type CompareOp,
  type DatePart,
  type Literal,
  type QueryNode,
} from './query-node';
import { isNumeric, type FieldDef } from './schema';

/** How the compiler finds fields: FieldResolver for an index, or a stand-in when fields are not known yet. */
export interface FieldLookup {
  find(name: string): FieldDef | undefined;
  textFields(): FieldDef[];
}

// Same language as /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i, written so a long run of digits cannot backtrack.
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
const COMPARISON = /^(>=|<=|>|<)(.*)$/;

/**
 * Turns the parsed query into the engine-neutral QueryNode: resolves fields (a group's field is inherited
 * by what it holds), checks and converts values to the field's type, applies NOT > AND > OR. Positions in
 * details are 1-based in the text the user sent.
 */
export class QueryCompiler {
  constructor(
    private readonly fields: FieldLookup,
    private readonly now: number,
  ) {}

  compile(ast: QueryAst, inherited: FieldRef | null = null): QueryNode {
    switch (ast.kind) {
      case 'group': {
        const field = ast.field ?? inherited;
        const groups: QueryNode[][] = [];
        for (const c of ast.clauses) {
          const node = this.compile(c.node, field);
          const operand = c.negate ? not(node) : node;
          if (c.join === 'or' || groups.length === 0) groups.push([operand]);
          else groups[groups.length - 1].push(operand);
        }
        return or(...groups.map((g) => and(...g)));
      }
      case 'term': {
        const ref = ast.field ?? inherited;
        const node = ast.fuzzy
          ? this.fuzzy(ref, ast.text, ast.fuzzy, ast.at)
          : this.leaf(ref, ast.text, ast.quoted, ast.at);
        return boosted(node, ast.boost ?? 1);
      }
      case 'range':
        return boosted(this.range(ast, ast.field ?? inherited), 1);
    }
  }

  private resolve(ref: FieldRef): FieldDef {
    const f = this.fields.find(ref.name);
    if (!f) throw AppError.invalid(`Unknown field ${quoteInput(ref.name)} at position ${ref.at + 1}`);
    return f;
  }

  private leaf(ref: FieldRef | null, raw: string, quoted: boolean, at: number): QueryNode {
    if (ref === null) {
      if (!quoted && raw === '*') return { kind: 'all' };
      if (!quoted && /^[<>]=?/.test(raw))
        throw AppError.invalid(`A comparison needs a field, as in ${quoteInput(`Field:${raw}`)} (position ${at + 1})`);
      return this.match(
        this.fields.textFields().map((f) => f.name),
        raw,
        quoted,
        at,
      );
    }
    // `*:*` is every record wherever it stands (`* OR *:*`, `NOT *:*`), as it is alone, unless a field is named `*`.
    if (ref.name === '*' && !quoted && raw === '*' && !this.fields.find('*')) return { kind: 'all' };
    const field = this.resolve(ref);
    if (!quoted && raw === '*') return { kind: 'exists', field: field.name, fieldType: field.type };
    if (!quoted && raw.startsWith('=') && raw.length > 1) {
      const value = raw.slice(1);
      // Exact on text; on numbers, dates and booleans `:` already means equal.
      if (field.type === 'string') return { kind: 'equals', field: field.name, value };
      return this.compare(field, 'eq', value, at);
    }
    if (!quoted && field.type === 'date' && raw.startsWith('@')) return datePart(field, raw, at);
    const cmp = quoted ? null : COMPARISON.exec(raw);
    if (cmp) {
      const op = ({ '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' } as const)[cmp[1] as '>' | '>=' | '<' | '<='];
      return this.compare(field, op, cmp[2], at);
    }
    if (field.type === 'string') return this.match([field.name], raw, quoted, at);
    return this.compare(field, 'eq', raw, at);
  }

  /** `word~1`: one word of text, matched within that many edits (the engine finds which words those are). */
  private fuzzy(ref: FieldRef | null, raw: string, edits: number, at: number): QueryNode {
    const where = `(position ${at + 1})`;
    let fields: string[];
    if (ref === null) fields = this.fields.textFields().map((f) => f.name);
    else {
      const field = this.resolve(ref);
      if (field.type !== 'string')
        throw AppError.invalid(
          `A fuzzy word (~) searches text, but field ${quoteInput(field.name)} is ${field.type === 'integer' ? 'an integer' : `a ${field.type}`} ${where}`,
        );
      fields = [field.name];
    }
    if (/[*?]$/.test(raw) || /^[=<>@]/.test(raw))
      throw AppError.invalid(`A fuzzy word (~) is a plain word, not a wildcard, comparison or date part ${where}`);
    const ws = words(raw);
    if (ws.length !== 1)
      throw AppError.invalid(
        ws.length === 0
          ? `${quoteInput(raw)} has no letters or digits to search for ${where}`
          : `A fuzzy word (~) must be one word; ${quoteInput(raw)} holds ${ws.length} ${where}`,
      );
    if (fields.length === 0) return { kind: 'none' };
    return { kind: 'match', fields, words: ws, prefix: false, ...(edits > 0 ? { fuzzy: edits } : {}) };
  }

  private match(fields: string[], raw: string, quoted: boolean, at: number): QueryNode {
    let text = raw;
    let prefix = false;
    if (!quoted) {
      if (/[?]|\*(?=.)/.test(text))
        throw AppError.invalid(`Wildcards are only supported at the end of a word, as in foo* (position ${at + 1})`);
      if (text.endsWith('*')) {
        prefix = true;
        text = text.slice(0, -1);
      }
    }
    const ws = words(text);
    if (ws.length === 0) {
      if (prefix)
        return fields.length
          ? or(...fields.map((f): QueryNode => ({ kind: 'exists', field: f, fieldType: 'string' })))
          : { kind: 'none' };
      throw AppError.invalid(`${quoteInput(raw)} has no letters or digits to search for (position ${at + 1})`);
    }
    if (fields.length === 0) return { kind: 'none' };
    return { kind: 'match', fields, words: ws, prefix };
  }

  private literal(field: FieldDef, raw: string, at: number): Literal | { type: 'period'; start: number; end: number } {
    const bad = (what: string) =>
      AppError.invalid(
        `Type mismatch at position ${at + 1}: field ${quoteInput(field.name)} is ${what}, but ${quoteInput(raw)} is not`,
      );
    if (isNumeric(field.type)) {
      if (!NUMBER.test(raw.trim())) throw bad('a number');
      const value = Number(raw);
      if (!Number.isFinite(value))
        throw AppError.invalid(`Number ${quoteInput(raw)} at position ${at + 1} is outside the supported range`);
      return { type: 'number', value };
    }
    if (field.type === 'boolean') {
      const v = raw.trim().toLowerCase();
      if (['true', 'yes', '1'].includes(v)) return { type: 'boolean', value: true };
      if (['false', 'no', '0'].includes(v)) return { type: 'boolean', value: false };
      throw bad('a boolean (true or false)');
    }
    if (field.type === 'date') {
      const d = parseDateValue(raw, this.now);
      if (d === 'out-of-range')
        throw AppError.invalid(
          `Date ${quoteInput(raw)} at position ${at + 1} is outside the supported range (years 1-9999)`,
        );
      if (!d) throw bad('a date (2001-01-14, 2001-01-14T09:30, TODAY-7DAYS, ...)');
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

  private range(r: Extract<QueryAst, { kind: 'range' }>, ref: FieldRef | null): QueryNode {
    if (ref === null) throw AppError.invalid(`A range needs a field, as in Year:[1990 TO 2000] (position ${r.at + 1})`);
    const field = this.resolve(ref);
    const parts: QueryNode[] = [];
    const bound = (b: Bound, op: CompareOp) => {
      // A bare * is an open end; an escaped \* is the character.
      if (b.raw !== '*') parts.push(this.compare(field, op, unescapeQueryText(b.raw), b.at));
    };
    bound(r.low, r.lowInclusive ? 'gte' : 'gt');
    bound(r.high, r.highInclusive ? 'lte' : 'lt');
    return parts.length ? and(...parts) : { kind: 'exists', field: field.name, fieldType: field.type };
  }
}

/**
 * A clause's boost on the leaves it compiled to: a range or a date period (`Day:2001-01-14` is two
 * comparisons) adds its boost once, so only its first leaf carries it and the others 0.
 */
function boosted(node: QueryNode, boost: number): QueryNode {
  switch (node.kind) {
    case 'all':
    case 'none':
    case 'not':
      return node;
    case 'and':
      return { kind: 'and', children: node.children.map((c, i) => boosted(c, i === 0 ? boost : 0)) };
    case 'or':
      return { kind: 'or', children: node.children.map((c) => boosted(c, boost)) };
    default:
      return boost === 1 ? node : { ...node, boost };
  }
}

const DATE_PART = /^@([A-Za-z]+)=(\d{1,2}(?:,\d{1,2})*)(?:@(.+))?$/;

/** Zones Intl knows, checked once each. */
const knownZones = new Map<string, boolean>();
function isTimeZone(zone: string): boolean {
  let known = knownZones.get(zone);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      known = true;
    } catch {
      known = false;
    }
    if (knownZones.size < 1000) knownZones.set(zone, known);
  }
  return known;
}

/** `Field:@dayOfWeek=1,7@Europe/Paris` (the zone optional, UTC by default). */
function datePart(field: FieldDef, raw: string, at: number): QueryNode {
  const where = `(position ${at + 1})`;
  const m = DATE_PART.exec(raw);
  const partName = m?.[1] ?? '';
  if (!m || !(partName in DATE_PARTS))
    throw AppError.invalid(
      `${quoteInput(raw)} is not a date part ${where}: write ${quoteInput(`${field.name}:@dayOfWeek=1`)} with monthOfYear (1-12), dayOfWeek (1-7, Monday is 1) or hourOfDay (0-23), optionally followed by @ and a time zone`,
    );
  const part = partName as DatePart;
  const [low, high] = DATE_PARTS[part];
  const values = [...new Set(m[2].split(',').map(Number))].sort((a, b) => a - b);
  const off = values.find((v) => v < low || v > high);
  if (off !== undefined) throw AppError.invalid(`${part} is ${low} to ${high}, not ${off} ${where}`);
  const timeZone = m[3] ?? 'UTC';
  if (!isTimeZone(timeZone)) throw AppError.invalid(`Unknown time zone ${quoteInput(timeZone)} ${where}`);
  return { kind: 'datePart', field: field.name, part, values, timeZone };
}

import {
  BM25_B,
  BM25_K1,
  type CompareOp,
  type FieldType,
  type Literal,
  type QueryNode,
  type ScoreClause,
  type TextPart,
} from '@quarry/query-language';
import type { SingleWordFields } from './single-word-fields';
import { ident, wordsColumn } from './sql';
import { wordCountSql } from './text-terms';

export interface CompiledWhere {
  sql: string;
  /** Named parameters ($p1, $p2, ...): values are always bound, never spliced into SQL. */
  params: Record<string, string | number | boolean>;
}

/** What the compiler may know of the loaded table (LoadedTable carries it). */
export interface CompileContext {
  singleWord?: SingleWordFields;
  /** DuckDB's type of each column: a date part reads a calendar date (DATE) as its own local date. */
  columnTypes?: ReadonlyMap<string, string>;
}

const PART_SQL = { monthOfYear: 'month', dayOfWeek: 'isodow', hourOfDay: 'hour' } as const;

/** Beyond this many stored values a prefix tests the words column instead of listing them. */
const MAX_PREFIX_VALUES = 16;

function dateLiteral(ms: number): string {
  // From year 10000 on (the end of a period in 9999) ISO writes "+010000", which DuckDB refuses.
  return new Date(ms)
    .toISOString()
    .replace(/^\+0*(\d{4,})/, '$1')
    .replace('T', ' ')
    .replace('Z', '');
}

/**
 * An integer column compared with a number: the same test against a whole number, so DuckDB compares
 * BIGINT with BIGINT (and can filter while it scans) instead of turning every value into a DOUBLE.
 * Null when the comparison can never hold; undefined when the number is too large to be exact.
 */
export function integerBound(op: CompareOp, value: number): number | null | undefined {
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return undefined;
  if (Number.isInteger(value)) return value;
  switch (op) {
    case 'eq':
      return null;
    case 'gt':
    case 'lte':
      return Math.floor(value);
    case 'gte':
    case 'lt':
      return Math.ceil(value);
  }
}

/**
 * Compiles a QueryNode to a DuckDB boolean expression that is TRUE exactly for the matching records;
 * elsewhere it is FALSE or NULL, which WHERE treats alike. Only under NOT does NULL become FALSE
 * (so NOT of a leaf a record has no value for matches it, as in Lucene): leaving the positive leaves
 * bare keeps them simple comparisons that DuckDB applies while it scans.
 */
export function compileWhere(node: QueryNode, context: CompileContext = {}): CompiledWhere {
  const { where, params } = compileSearch(node, null, context);
  return { sql: where, params };
}

export interface CompiledSearch {
  where: string;
  /** The record's score (relevance.ts) as a DOUBLE expression; null when none was asked for. */
  score: string | null;
  /** What `where` and `score` bind. */
  params: CompiledWhere['params'];
  /**
   * What `where` alone binds: a statement without the score (a count) takes these, as DuckDB refuses
   * a parameter the statement does not use.
   */
  whereParams: CompiledWhere['params'];
}

/** Letters and digits are all a word holds; anything else is escaped all the same. */
const regexWord = (w: string) => w.replace(/[^\p{L}\p{N}]/gu, (c) => `\\${c}`);

/**
 * The WHERE of a (fuzzy-resolved) query and, given its score clauses, the score: each clause's boost
 * times the sum of its parts' BM25, added up in clause order, as scoreRecord adds them in JS.
 */
export function compileSearch(
  node: QueryNode,
  clauses: readonly ScoreClause[] | null,
  context: CompileContext = {},
): CompiledSearch {
  const params: CompiledWhere['params'] = {};
  const singleWord = context.singleWord ?? new Map();
  let n = 0;
  const bind = (value: string | number | boolean) => {
    const name = `p${++n}`;
    params[name] = value;
    return `$${name}`;
  };

  const value = (lit: Literal): string => {
    switch (lit.type) {
      case 'string':
        return bind(lit.value);
      case 'number':
        // The driver binds a whole JS number as an int64, which 1e300 overflows: such a number goes as its text.
        return `CAST(${bind(Number.isInteger(lit.value) && !Number.isSafeInteger(lit.value) ? String(lit.value) : lit.value)} AS DOUBLE)`;
      case 'boolean':
        return `CAST(${bind(lit.value)} AS BOOLEAN)`;
      case 'date':
        return `CAST(${bind(dateLiteral(lit.value))} AS TIMESTAMP)`;
    }
  };

  const OPS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

  const compare = (field: string, fieldType: FieldType, op: CompareOp, lit: Literal): string => {
    if (lit.type === 'number' && fieldType === 'integer') {
      const bound = integerBound(op, lit.value);
      if (bound === null) return 'FALSE';
      if (bound !== undefined) return `(${ident(field)} ${OPS[op]} CAST(${bind(bound)} AS BIGINT))`;
    }
    const col = lit.type === 'string' ? `lower(CAST(${ident(field)} AS VARCHAR))` : ident(field);
    return `(${col} ${OPS[op]} ${value(lit)})`;
  };

  const inList = (field: string, values: readonly string[]) =>
    values.length ? `(${ident(field)} IN (${values.map((v) => bind(v)).join(', ')}))` : 'FALSE';

  // One text field against consecutive words (the last one a prefix when `prefix`).
  const matchField = (field: string, words: string[], prefix: boolean): string => {
    const shape = singleWord.get(field);
    if (!shape) {
      // Against the precomputed " word word " column: a substring test, no regex per row.
      return `contains(${wordsColumn(field)}, ${bind(` ${words.join(' ')}${prefix ? '' : ' '}`)})`;
    }
    // Every value is one word: several words can never be consecutive in it.
    if (words.length !== 1) return 'FALSE';
    const [word] = words;
    if (!prefix)
      return shape.values
        ? inList(field, shape.values.get(word) ?? [])
        : `(${wordsColumn(field)} = ${bind(` ${word} `)})`;
    if (shape.values) {
      const hits = [...shape.values].filter(([k]) => k.startsWith(word)).flatMap(([, vs]) => vs);
      if (hits.length <= MAX_PREFIX_VALUES) return inList(field, hits);
    }
    return `prefix(${wordsColumn(field)}, ${bind(` ${word}`)})`;
  };

  const walk = (q: QueryNode): string => {
    switch (q.kind) {
      case 'all':
        return 'TRUE';
      case 'none':
        return 'FALSE';
      case 'and':
        return `(${q.children.map(walk).join(' AND ')})`;
      case 'or':
        return `(${q.children.map(walk).join(' OR ')})`;
      case 'not':
        return `(NOT coalesce(${walk(q.child)}, FALSE))`;
      case 'match': {
        if (q.fuzzy !== undefined) {
          const expansions = q.expansions ?? [];
          if (expansions.length === 0 || q.fields.length === 0) return 'FALSE';
          // One pass of RE2 over the words column, however many expansions.
          const pattern = bind(` (?:${expansions.map(regexWord).join('|')}) `);
          return `(${q.fields.map((f) => `regexp_matches(${wordsColumn(f)}, ${pattern})`).join(' OR ')})`;
        }
        const perField = q.fields.map((f) => matchField(f, q.words, q.prefix));
        return perField.length ? `(${perField.join(' OR ')})` : 'FALSE';
      }
      case 'compare':
        return compare(q.field, q.fieldType, q.op, q.value);
      case 'exists':
        return q.fieldType === 'string' ? `(${ident(q.field)} <> '')` : `(${ident(q.field)} IS NOT NULL)`;
      case 'equals':
        return `(CAST(${ident(q.field)} AS VARCHAR) = ${bind(q.value)})`;
      case 'datePart': {
        // The wall clock as the crosstab groups it: timestamps are stored in UTC, DATE is already local.
        const col = ident(q.field);
        const type = context.columnTypes?.get(q.field);
        const zone = () => bind(q.timeZone);
        const local =
          type === 'DATE'
            ? col
            : type?.startsWith('TIMESTAMP WITH TIME ZONE')
              ? `timezone(${zone()}, ${col})`
              : q.timeZone === 'UTC'
                ? col
                : `timezone(${zone()}, timezone('UTC', ${col}))`;
        return `(${PART_SQL[q.part]}(${local}) IN (${q.values.map((v) => String(v)).join(', ')}))`;
      }
    }
  };

  const where = walk(node);
  const whereParams = { ...params };
  if (clauses === null) return { where, score: null, params, whereParams };

  const double = (v: number) => `CAST(${bind(v)} AS DOUBLE)`;
  // Bound once, and only when a word is scored: DuckDB refuses a parameter the statement never uses
  // (a score of `*` alone, or of words no field holds, has none).
  let constants: { k1: string; k1p1: string; oneMinusB: string; b: string } | undefined;
  const bm25Constants = () =>
    (constants ??= {
      k1: double(BM25_K1),
      k1p1: double(BM25_K1 + 1),
      oneMinusB: double(1 - BM25_B),
      b: double(BM25_B),
    });
  // The same operations in the same order as bm25(): the two paths' scores agree to the last bit.
  const part = (p: TextPart) => {
    const { k1, k1p1, oneMinusB, b } = bm25Constants();
    const w = wordsColumn(p.field);
    const doubled = `replace(${w}, ' ', '  ')`;
    const needle = bind(` ${p.words.join('  ')} `);
    const tf = `CAST((length(${doubled}) - length(replace(${doubled}, ${needle}, ''))) // length(${needle}) AS DOUBLE)`;
    const len = `CAST(${wordCountSql(w)} AS DOUBLE)`;
    return `coalesce(((${double(p.idf)} * ${tf}) * ${k1p1}) / (${tf} + (${k1} * (${oneMinusB} + ((${b} * ${len}) / ${double(p.avglen)})))), 0.0)`;
  };
  const terms = clauses.map((c) => {
    if (c.kind === 'constant')
      return `(CASE WHEN coalesce(${walk(c.leaf)}, FALSE) THEN ${double(c.boost)} ELSE 0.0 END)`;
    if (c.parts.length === 0) return '0.0';
    return `(${double(c.boost)} * (${c.parts.map(part).join(' + ')}))`;
  });
  return { where, score: terms.length ? terms.join(' + ') : '0.0', params, whereParams };
}

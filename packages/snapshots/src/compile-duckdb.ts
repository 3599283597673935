import type { CompareOp, FieldType, Literal, QueryNode } from '@quarry/query-language';
import type { SingleWordFields } from './single-word-fields';
import { ident, wordsColumn } from './sql';

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

  return { sql: walk(node), params };
}

import type { CompareOp, FieldType, Literal, QueryNode } from '@quarry/query-language';
import { integerBound } from '@quarry/snapshots';

/** A ClickHouse parameter's value, bound by name as `{p1:Type}`: never spliced into the SQL text. */
export type ClickHouseParam = string | number | boolean | ReadonlyArray<string | number | boolean>;

export interface ClickHouseWhere {
  sql: string;
  params: Record<string, ClickHouseParam>;
}

/** Quotes an identifier for ClickHouse: field names may hold spaces, quotes, backticks and backslashes. */
export function chIdent(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** A SQL string literal, for what ClickHouse cannot take as a parameter (a table function's file path). */
export function chLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Whether a ClickHouse column type holds calendar dates (no time of day): each is its own local date. */
export const isCalendarDate = (type: string | undefined) => /^(Nullable\()?Date(32)?\)?$/.test(type ?? '');

/**
 * A text field's words as the DuckDB load writes its words column: lower-cased runs of letters and
 * digits, space-separated and space-padded (" star wars "), so a word, phrase or prefix match is the
 * same substring test. Computed per query: the Parquet snapshot ClickHouse reads has no words column.
 */
export function chWords(col: string): string {
  // Runs of other characters become one space, trimmed at both ends: the same text as splitting and
  // joining, without a lambda (which the Parquet reader's filter push-down cannot evaluate).
  return `concat(' ', trimBoth(replaceRegexpAll(lowerUTF8(toString(${col})), '[^\\\\p{L}\\\\p{N}]+', ' ')), ' ')`;
}

function dateLiteral(ms: number): string {
  // ClickHouse's DateTime64 reads "YYYY-MM-DD hh:mm:ss.fff"; a year past 9999 is out of its range anyway.
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

const PART_SQL = { monthOfYear: 'toMonth', dayOfWeek: 'toDayOfWeek', hourOfDay: 'toHour' } as const;

/**
 * Compiles a QueryNode to a ClickHouse boolean expression, as compileWhere does for DuckDB: TRUE exactly
 * for the matching records, FALSE or NULL elsewhere, and only under NOT is NULL made FALSE. Every value
 * is a typed query parameter.
 */
export function compileClickHouse(
  node: QueryNode,
  columnTypes: ReadonlyMap<string, string>,
  prefix = 'p',
): ClickHouseWhere {
  const params: ClickHouseWhere['params'] = {};
  let n = 0;
  const bind = (value: ClickHouseParam, type: string) => {
    const name = `${prefix}${++n}`;
    params[name] = value;
    return `{${name}:${type}}`;
  };

  const value = (lit: Literal): string => {
    switch (lit.type) {
      case 'string':
        return bind(lit.value, 'String');
      case 'number':
        return bind(lit.value, 'Float64');
      case 'boolean':
        return bind(lit.value, 'Bool');
      case 'date':
        return bind(dateLiteral(lit.value), "DateTime64(3, 'UTC')");
    }
  };

  const OPS = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

  const compare = (field: string, fieldType: FieldType, op: CompareOp, lit: Literal): string => {
    const col = chIdent(field);
    if (lit.type === 'number' && fieldType === 'integer') {
      const bound = integerBound(op, lit.value);
      if (bound === null) return 'false';
      if (bound !== undefined) return `(${col} ${OPS[op]} ${bind(bound, 'Int64')})`;
    }
    if (lit.type === 'string') return `(lowerUTF8(toString(${col})) ${OPS[op]} ${value(lit)})`;
    return `(${col} ${OPS[op]} ${value(lit)})`;
  };

  const walk = (q: QueryNode): string => {
    switch (q.kind) {
      case 'all':
        return 'true';
      case 'none':
        return 'false';
      case 'and':
        return `(${q.children.map(walk).join(' AND ')})`;
      case 'or':
        return `(${q.children.map(walk).join(' OR ')})`;
      case 'not':
        return `(NOT coalesce(${walk(q.child)}, false))`;
      case 'match': {
        const needle = ` ${q.words.join(' ')}${q.prefix ? '' : ' '}`;
        const perField = q.fields.map((f) => `(position(${chWords(chIdent(f))}, ${bind(needle, 'String')}) > 0)`);
        return perField.length ? `(${perField.join(' OR ')})` : 'false';
      }
      case 'compare':
        return compare(q.field, q.fieldType, q.op, q.value);
      case 'exists':
        return q.fieldType === 'string' ? `(${chIdent(q.field)} != '')` : `(${chIdent(q.field)} IS NOT NULL)`;
      case 'equals':
        return `(toString(${chIdent(q.field)}) = ${bind(q.value, 'String')})`;
      case 'datePart': {
        const col = chIdent(q.field);
        const type = columnTypes.get(q.field);
        // A calendar date is its own local date; its hour is 0, as DuckDB's hour(DATE) is.
        if (isCalendarDate(type) && q.part === 'hourOfDay')
          return q.values.includes(0) ? `(${col} IS NOT NULL)` : 'false';
        const local = isCalendarDate(type) ? col : `toTimeZone(${col}, ${bind(q.timeZone, 'String')})`;
        return `(${PART_SQL[q.part]}(${local}) IN (${q.values.map((v) => String(Math.trunc(v))).join(', ')}))`;
      }
    }
  };

  return { sql: walk(node), params };
}

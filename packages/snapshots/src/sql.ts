import { listValue, type DuckDBValue } from '@duckdb/node-api';

/** Quotes an identifier for DuckDB: field names may hold spaces, quotes and symbols. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A SQL string literal; used only for values DuckDB cannot take as parameters (file paths in table functions). */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** JSON text of one record, fields in catalog order; dates as ISO text (DATE: the day; TIMESTAMP: to the second). */
export function recordJsonSql(
  fields: ReadonlyArray<{ name: string }>,
  columnTypes: ReadonlyMap<string, string>,
): string {
  const value = (name: string) => {
    const type = columnTypes.get(name);
    if (type === 'DATE') return `strftime(${ident(name)}, '%Y-%m-%d')`;
    if (type?.startsWith('TIMESTAMP')) return `strftime(${ident(name)}, '%Y-%m-%dT%H:%M:%S')`;
    return ident(name);
  };
  return `CAST(json_object(${fields.map((f) => `${literal(f.name)}, ${value(f.name)}`).join(', ')}) AS VARCHAR)`;
}

/**
 * The hidden column holding a text field's words, lower-cased, space-separated and space-padded
 * (" star wars "): word, phrase and prefix matching become substring tests with a bound parameter.
 */
export function wordsColumn(field: string): string {
  return ident(`__w:${field}`);
}

/** SQL computing that column at load time; words are runs of letters and digits. */
export function wordsExpr(textExpr: string): string {
  return `' ' || array_to_string(list_filter(regexp_split_to_array(lower(${textExpr}), '[^\\pL\\pN]+'), x -> x <> ''), ' ') || ' '`;
}

/** A list bound as one parameter (`x IN (SELECT unnest($name))`): DuckDB hashes it, where a literal IN list is compared item by item. */
export function listParam(values: ReadonlyArray<string | number | boolean>): DuckDBValue {
  return listValue([...values]);
}

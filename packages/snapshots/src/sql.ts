/** Quotes an identifier for DuckDB: field names may hold spaces, quotes and symbols. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A SQL string literal; used only for values DuckDB cannot take as parameters (file paths in table functions). */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** JSON text of one record, fields in catalog order; dates as ISO text (DATE: the day; TIMESTAMP: to the second). */
export function recordJsonSql(fields: ReadonlyArray<{ name: string }>, columnTypes: ReadonlyMap<string, string>): string {
  const value = (name: string) => {
    const type = columnTypes.get(name);
    if (type === 'DATE') return `strftime(${ident(name)}, '%Y-%m-%d')`;
    if (type?.startsWith('TIMESTAMP')) return `strftime(${ident(name)}, '%Y-%m-%dT%H:%M:%S')`;
    return ident(name);
  };
  return `CAST(json_object(${fields.map((f) => `${literal(f.name)}, ${value(f.name)}`).join(', ')}) AS VARCHAR)`;
}

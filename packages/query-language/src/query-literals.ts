/*
 * Writing values into query text as literals: every character the lexer gives a meaning (query-lexer.ts
 * ESCAPABLE, plus "=" and the comparison signs that would start a value) is escaped, so the text a value
 * holds (OR, *, quotes, parentheses, a field name and ":") reads back as that very text, never as syntax.
 */

const ESCAPED = /[+\-!(){}[\]^"?:\\&|'/~* \t\r\n\f=<>]/g;

/** The text with every character the query language could read as syntax escaped. */
export function escapeQueryText(text: string): string {
  return text.replace(ESCAPED, (c) => `\\${c}`);
}

/** `Field:` for any field name, however it is spelled. */
export function fieldPrefix(field: string): string {
  return `${escapeQueryText(field)}:`;
}

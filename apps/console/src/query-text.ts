/*
 * Values written into query text as literals, exactly as the query language's escapeQueryText and
 * fieldPrefix (packages/query-language/src/query-literals.ts) and the crosstab's drill queries write
 * them: every character the lexer could read as syntax behind a backslash. A copy, not an import: the
 * console bundles @quarry/client only, and the query language's index would bring its parser (and zod)
 * into the page for one regular expression. Keep the two in step.
 */
const ESCAPED = /[+\-!(){}[\]^"?:\\&|'/~* \t\r\n\f=<>]/g;

export function escapeQueryText(text: string): string {
  return text.replace(ESCAPED, (c) => `\\${c}`);
}

/** `Field:` for any field name, however it is spelled. */
export function fieldPrefix(field: string): string {
  return `${escapeQueryText(field)}:`;
}

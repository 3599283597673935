/** How much of a user's string an error detail may echo: enough to recognise it, never a megabyte. */
export const MAX_QUOTED_CHARS = 100;

/**
 * A user-supplied string as error details quote it: in double quotes, cut to MAX_QUOTED_CHARS
 * characters with an ellipsis, so a hostile input can neither bloat a response nor a log line.
 */
export function quoteInput(value: string, max = MAX_QUOTED_CHARS): string {
  const chars = Array.from(value);
  return chars.length <= max ? `"${value}"` : `"${chars.slice(0, max).join('')}…" (${chars.length} characters)`;
}

/** A UTF-16 surrogate outside a pair: in /u mode a pair is one code point, outside this range. */
const UNPAIRED_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where a string holds an unpaired surrogate (a JSON \uD800 escape gives one, UTF-8 text cannot), or -1.
 * DuckDB, SQLite and gRPC peers each read a U+FFFD in its place, so such text compares and reads back
 * differently from one store to the next.
 */
export function unpairedSurrogateAt(value: string): number {
  return value.search(UNPAIRED_SURROGATE);
}

/** A list of user-supplied names: at most `max` quoted, then "and N more". */
export function quoteList(values: readonly string[], max = 10): string {
  const shown = values
    .slice(0, max)
    .map((v) => quoteInput(v))
    .join(', ');
  return values.length > max ? `${shown} and ${values.length - max} more` : shown;
}

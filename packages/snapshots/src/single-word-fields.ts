import { ident, wordsExpr } from './sql';

/**
 * Text fields in which every value is one word (codes, states, names without spaces): the value
 * lower-cased is its only word, so the field's words column is always `" " || lower(value) || " "`.
 * There a word match is an equality and a prefix a `prefix()` test, both as fast as comparing the
 * value itself, instead of a substring search (compileWhere).
 */
export type SingleWordFields = ReadonlyMap<string, SingleWordField>;

export interface SingleWordField {
  /**
   * When the field has few distinct values: each word (lower-cased, as DuckDB lowers it) to the stored
   * values that are that word in any case ("sfo" → ["SFO"]). A match then tests the stored column
   * itself, which also lets DuckDB filter while it scans.
   */
  values?: ReadonlyMap<string, readonly string[]>;
}

/** Beyond this many distinct values a field keeps no value list: its words column does the equality. */
export const MAX_LISTED_VALUES = 4096;

type Query = (sql: string) => Promise<Array<Record<string, unknown>>>;

/**
 * Learns, for each text field of `from` (a table, or the Parquet file a version is written from),
 * whether it is single-word, comparing each distinct value with its words text computed by the very
 * expression that writes the words column (wordsExpr), so the fast path can never disagree with the
 * substring test it replaces. Reading the values, not the words column, lets a load learn this before
 * it writes the table, and write no words column for such a field (wordsColumnDef).
 */
export async function learnSingleWordFields(
  all: Query,
  from: string,
  fields: ReadonlyArray<{ name: string; type: string }>,
): Promise<SingleWordFields> {
  const out = new Map<string, SingleWordField>();
  for (const f of fields.filter((x) => x.type === 'string')) {
    const col = ident(f.name);
    const distinct = `(SELECT v, ${wordsExpr('v')} AS w FROM (SELECT DISTINCT ${col} AS v FROM ${from} WHERE ${col} IS NOT NULL))`;
    // One word: the words text is the whole value lower-cased, and that holds no space between words.
    const [stats] = await all(
      `SELECT count(*) AS n, count(*) FILTER (WHERE w IS DISTINCT FROM ${singleWordExpr('v')} OR contains(v, ' ')) AS multi FROM ${distinct}`,
    );
    if (Number(stats.multi) !== 0) continue;
    if (Number(stats.n) > MAX_LISTED_VALUES) {
      out.set(f.name, {});
      continue;
    }
    const rows = await all(`SELECT lower(v) AS k, list(v ORDER BY v) AS vs FROM ${distinct} WHERE v <> '' GROUP BY k`);
    out.set(f.name, { values: new Map(rows.map((r) => [String(r.k), (r.vs as unknown[]).map(String)])) });
  }
  return out;
}

/** The words text of a single-word field's value: what wordsExpr gives for every value of such a field. */
export function singleWordExpr(textExpr: string): string {
  return `' ' || lower(${textExpr}) || ' '`;
}

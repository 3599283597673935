import type { FieldType } from './schema';

/** A typed literal, already converted to the field's type. Dates are epoch milliseconds, UTC. */
export type Literal =
  | { type: 'string'; value: string }
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'date'; value: number };

export type CompareOp = 'eq' | 'gt' | 'gte' | 'lt' | 'lte';

/**
 * The engine-neutral query: what Quarry's query language means, independent of any store.
 * Each search adapter translates it to its own form. Leaves are never "unknown": a record
 * without a value simply does not match a leaf, and NOT of such a leaf matches.
 */
export type QueryNode =
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'and'; children: QueryNode[] }
  | { kind: 'or'; children: QueryNode[] }
  | { kind: 'not'; child: QueryNode }
  /**
   * Consecutive words in any of the text fields, case-insensitive; words are runs of letters and
   * digits. With `prefix` the last word only has to start with the given text. With `fuzzy` (one word,
   * never a prefix) the word allows that many edits: the engine resolves it against the version's
   * vocabulary into `expansions` (fuzzyExpansions), and the leaf then holds where any expansion is a word.
   */
  | (Boosted & {
      kind: 'match';
      fields: string[];
      words: string[];
      prefix: boolean;
      fuzzy?: number;
      expansions?: string[];
    })
  | (Boosted & { kind: 'compare'; field: string; fieldType: FieldType; op: CompareOp; value: Literal })
  | (Boosted & { kind: 'exists'; field: string; fieldType: FieldType })
  /**
   * `Field:=value` on a text field: the whole stored value is exactly `value`, case and all (what a
   * crosstab groups by, so a drill-through selects exactly a cell's records).
   */
  | (Boosted & { kind: 'equals'; field: string; value: string })
  /**
   * `Field:@dayOfWeek=1,2` (optionally `@Europe/Paris`): the date's part in that zone's wall clock is one
   * of `values` (ISO days 1-7 from Monday, months 1-12, hours 0-23). A calendar date (no time of day) is its
   * own local date in every zone. What a crosstab's repeating date group drills into.
   */
  | (Boosted & { kind: 'datePart'; field: string; part: DatePart; values: number[]; timeZone: string });

/** A leaf's `^n`: the factor of what it adds to a record's score (absent: 1). Matching ignores it. */
interface Boosted {
  boost?: number;
}

/** The leaves of a QueryNode: what a record is tested against. */
export type QueryLeaf = Extract<QueryNode, Boosted>;

/** The repeating parts of a date, and the values each may take. */
export const DATE_PARTS = {
  monthOfYear: [1, 12],
  dayOfWeek: [1, 7],
  hourOfDay: [0, 23],
} as const satisfies Record<string, readonly [number, number]>;
export type DatePart = keyof typeof DATE_PARTS;

export function and(...children: QueryNode[]): QueryNode {
  const flat = children.flatMap((c) => (c.kind === 'and' ? c.children : [c])).filter((c) => c.kind !== 'all');
  if (flat.some((c) => c.kind === 'none')) return { kind: 'none' };
  if (flat.length === 0) return { kind: 'all' };
  return flat.length === 1 ? flat[0] : { kind: 'and', children: flat };
}

export function or(...children: QueryNode[]): QueryNode {
  const flat = children.flatMap((c) => (c.kind === 'or' ? c.children : [c])).filter((c) => c.kind !== 'none');
  if (flat.some((c) => c.kind === 'all')) return { kind: 'all' };
  if (flat.length === 0) return { kind: 'none' };
  return flat.length === 1 ? flat[0] : { kind: 'or', children: flat };
}

export function not(child: QueryNode): QueryNode {
  if (child.kind === 'all') return { kind: 'none' };
  if (child.kind === 'none') return { kind: 'all' };
  if (child.kind === 'not') return child.child;
  return { kind: 'not', child };
}

/** 'İ' and the capital sigma: the letters JS's toLowerCase lowers unlike DuckDB's lower(). */
const FOLDS_APART = /[\u0130\u03a3]/;

/**
 * Lower-cases text as DuckDB's lower() does (the snapshot's text and words columns are built by it):
 * each code point on its own, by its simple mapping. JS's toLowerCase applies context (a Greek capital
 * sigma ending a word becomes final 'ς') and full mappings ('İ' becomes 'i' + U+0307), which gave words
 * no record's column holds (ΟΔΟΣ, İstanbul). The one full mapping among lower cases is 'İ'.
 */
export function foldCase(text: string): string {
  // Most text has neither: one call then gives the same answer.
  if (!FOLDS_APART.test(text)) return text.toLowerCase();
  let out = '';
  for (const ch of text) out += ch === '\u0130' ? 'i' : ch.toLowerCase();
  return out;
}

/** Splits text into lower-cased words the way every adapter must: runs of letters and digits. */
export function words(text: string): string[] {
  return foldCase(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

import { AppError } from '@quarry/errors';
import type { CompareOp, FieldType, Literal, QueryNode } from '@quarry/query-language';
import type { SortKey } from '../../ports/search-index.port';
import {
  booleanRange,
  dateRange,
  doubleRange,
  fieldTag,
  integerRange,
  isStoredPrefix,
  pairPrefixPattern,
  pairToken,
  runPatterns,
  storedPrefixToken,
  wordPrefixPattern,
  wordToken,
  type KeyRange,
} from './typesense-encoding';

/**
 * Typesense document layout (names stay ASCII whatever the source field names are). Field i of the
 * index is "slot" i; every text token starts with the slot's tag, so one array per kind serves all
 * fields and a match on many fields is one filter with many values:
 * - `__has` string[]: the tags of the fields that have a value (Typesense cannot filter on missing);
 * - `__w` string[]: word tokens; `__b`: tokens of adjacent word pairs (two-word phrases); `__r`: tokens
 *   of each run of three or more words to the end of a value (longer phrases); `__p`: the first 1-3
 *   characters of each word (short prefixes, which would otherwise expand to very many words);
 * - `k{i}` int64: the order-preserving key of a number, integer, date or boolean value;
 * - `r{i}` int64: a text value's rank in the embedded engine's order (lower-cased), for sorting;
 * - `__rowid` (source order, ties) and `__json` (the record as returned).
 * See typesense-encoding.ts for the tokens and keys.
 */
export interface FieldSlot {
  name: string;
  type: FieldType;
  slot: number;
}

export type FieldSlots = ReadonlyMap<string, FieldSlot>;

export function slotsOf(fields: ReadonlyArray<{ name: string; type: string }>): Map<string, FieldSlot> {
  return new Map(fields.map((f, slot) => [f.name, { name: f.name, type: f.type as FieldType, slot }]));
}

/** Typesense refuses a filter_by with more operands and operators than this (`--filter-by-max-ops`, tsconfig.h). */
export const DEFAULT_MAX_FILTER_OPS = 100;
/** Matches nothing (rowids start at 0). */
const NOTHING = '__rowid:<0';

/** Bounds of one key condition, kept so that two on the same key can be ANDed into one. */
interface KeyBounds {
  key: string;
  lo: bigint | null;
  hi: bigint | null;
}
type Leaf = { kind: 'leaf'; text: string; bounds?: KeyBounds };
/** A filter as a formula over Typesense conditions, kept as a tree to count what Typesense will count. */
type Formula = { kind: 'true' } | { kind: 'false' } | Leaf | { kind: 'and' | 'or'; children: Formula[] };

const TRUE: Formula = { kind: 'true' };
const FALSE: Formula = { kind: 'false' };
const leaf = (text: string): Formula => ({ kind: 'leaf', text });

function keyCondition(b: KeyBounds): string {
  if (b.lo !== null && b.hi !== null) return b.lo === b.hi ? `${b.key}:=${b.lo}` : `${b.key}:[${b.lo}..${b.hi}]`;
  if (b.lo !== null) return `${b.key}:>=${b.lo}`;
  return `${b.key}:<=${b.hi}`;
}

const keyLeaf = (bounds: KeyBounds): Leaf => ({ kind: 'leaf', text: keyCondition(bounds), bounds });

/**
 * AND/OR with constants folded, repeated conditions dropped, and bounds on one key ANDed into one
 * range (a query range arrives as two comparisons): Typesense limits the number of conditions.
 */
function combine(kind: 'and' | 'or', parts: Formula[]): Formula {
  const absorbing = kind === 'and' ? 'false' : 'true';
  const neutral = kind === 'and' ? 'true' : 'false';
  const children: Formula[] = [];
  const add = (p: Formula) => {
    if (p.kind === 'leaf') {
      if (children.some((c) => c.kind === 'leaf' && c.text === p.text)) return;
      const same =
        kind === 'and' && p.bounds
          ? children.findIndex((c) => c.kind === 'leaf' && c.bounds?.key === p.bounds?.key)
          : -1;
      if (same >= 0 && p.bounds) {
        const other = (children[same] as Leaf).bounds as KeyBounds;
        const lo =
          other.lo === null
            ? p.bounds.lo
            : p.bounds.lo === null
              ? other.lo
              : other.lo > p.bounds.lo
                ? other.lo
                : p.bounds.lo;
        const hi =
          other.hi === null
            ? p.bounds.hi
            : p.bounds.hi === null
              ? other.hi
              : other.hi < p.bounds.hi
                ? other.hi
                : p.bounds.hi;
        if (lo !== null && hi !== null && lo > hi) return 'empty';
        children[same] = keyLeaf({ key: p.bounds.key, lo, hi });
        return;
      }
    }
    children.push(p);
  };
  for (const p of parts) {
    if (p.kind === absorbing) return p;
    if (p.kind === neutral) continue;
    const flat = p.kind === kind ? p.children : [p];
    for (const c of flat) if (add(c) === 'empty') return FALSE;
  }
  if (children.length === 0) return kind === 'and' ? TRUE : FALSE;
  return children.length === 1 ? children[0] : { kind, children };
}

function leaves(f: Formula): number {
  if (f.kind === 'leaf') return 1;
  if (f.kind === 'and' || f.kind === 'or') return f.children.reduce((n, c) => n + leaves(c), 0);
  return 0;
}

function render(f: Formula): string {
  switch (f.kind) {
    case 'true':
      return '__rowid:>=0';
    case 'false':
      return NOTHING;
    case 'leaf':
      return f.text;
    case 'and':
    case 'or':
      return `(${f.children.map(render).join(f.kind === 'and' ? ' && ' : ' || ')})`;
  }
}

/** Tokens of an array field: any of them (`:=`), or none of them (`:!=`, which includes records without the field). */
function tokens(field: '__has' | '__w' | '__b' | '__r' | '__p', values: string[], negate: boolean): Formula {
  if (values.length === 0) return negate ? TRUE : FALSE;
  return leaf(`${field}:${negate ? '!=' : '='}[${values.join(',')}]`);
}

function keyRange(slot: FieldSlot, op: CompareOp, value: Literal): KeyRange {
  switch (value.type) {
    case 'number':
      return slot.type === 'integer' ? integerRange(op, value.value) : doubleRange(op, value.value);
    case 'date':
      return dateRange(op, value.value);
    case 'boolean':
      return booleanRange(op, value.value);
    case 'string':
      throw AppError.invalid('Comparisons on text fields are not supported by the Typesense search backend');
  }
}

/** A comparison over keys; NOT of it also holds for records without a value, as Quarry's semantics require. */
function compare(slot: FieldSlot, op: CompareOp, value: Literal, negate: boolean): Formula {
  const r = keyRange(slot, op, value);
  const has = [fieldTag(slot.slot)];
  if (r === 'none') return negate ? TRUE : FALSE;
  if (r.lo === null && r.hi === null) return tokens('__has', has, negate);
  const key = `k${slot.slot}`;
  if (!negate) return keyLeaf({ key, lo: r.lo, hi: r.hi });
  const outside: Formula[] = [tokens('__has', has, true)];
  if (r.lo !== null) outside.push(leaf(`${key}:<${r.lo}`));
  if (r.hi !== null) outside.push(leaf(`${key}:>${r.hi}`));
  return combine('or', outside);
}

/** Consecutive words in any of the fields; with `prefix` the last one only has to start so. */
function match(slots: FieldSlot[], words: string[], prefix: boolean, negate: boolean): Formula {
  // `any` is true when some field holds the words; NOT pushes down by De Morgan.
  const any = (kind: 'and' | 'or') => (negate ? (kind === 'and' ? 'or' : 'and') : kind);
  if (words.length === 1) {
    const [w] = words;
    if (!prefix)
      return tokens(
        '__w',
        slots.map((s) => wordToken(s.slot, w)),
        negate,
      );
    if (isStoredPrefix(w))
      return tokens(
        '__p',
        slots.map((s) => storedPrefixToken(s.slot, w)),
        negate,
      );
    return tokens(
      '__w',
      slots.map((s) => wordPrefixPattern(s.slot, w)),
      negate,
    );
  }
  if (words.length === 2) {
    const [a, b] = words;
    return tokens(
      '__b',
      slots.map((s) => (prefix ? pairPrefixPattern(s.slot, a, b) : pairToken(s.slot, a, b))),
      negate,
    );
  }
  // Longer phrases: a run of the field that is the phrase, or starts with it and goes
  // on with another word; exact, so NOT keeps a record that holds the phrase's pairs only apart.
  const patterns = slots.map((s) => runPatterns(s.slot, words, prefix));
  const whole = patterns.flatMap((p) => (p.whole === undefined ? [] : [p.whole]));
  const longer = patterns.map((p) => p.longer);
  return combine(any('or'), [tokens('__r', whole, negate), tokens('__r', longer, negate)]);
}

export interface FilterBy {
  /** The filter_by text; undefined when every record matches. */
  filterBy: string | undefined;
  /** Operands and operators, as Typesense counts them against its limit. */
  operations: number;
}

/**
 * Translates a QueryNode to filter_by. NOT is pushed down to the leaves (De Morgan), where "not"
 * includes records without a value, as Quarry's semantics require. A filter longer than Typesense
 * accepts is refused here, with a message for the user rather than Typesense's.
 */
export function toFilterBy(node: QueryNode, slots: FieldSlots, maxOperations = DEFAULT_MAX_FILTER_OPS): FilterBy {
  const slot = (field: string): FieldSlot => {
    const s = slots.get(field);
    if (!s) throw AppError.internal(`field ${field} has no Typesense slot`);
    return s;
  };

  const walk = (q: QueryNode, negate: boolean): Formula => {
    switch (q.kind) {
      case 'all':
        return negate ? FALSE : TRUE;
      case 'none':
        return negate ? TRUE : FALSE;
      case 'not':
        return walk(q.child, !negate);
      case 'and':
      case 'or': {
        const kind = (q.kind === 'and') !== negate ? 'and' : 'or';
        return combine(
          kind,
          q.children.map((c) => walk(c, negate)),
        );
      }
      case 'match':
        if (q.fields.length === 0) return negate ? TRUE : FALSE;
        if (q.fuzzy !== undefined) {
          // filter_by has no edit distance: the adapter resolves the word against the version's own
          // vocabulary first (resolveFuzzy, as the embedded engines do), and the leaf is then its words.
          if (!q.expansions)
            throw AppError.internal('A fuzzy word reached the Typesense filter before its expansions were resolved');
          const fuzzySlots = q.fields.map(slot);
          return tokens(
            '__w',
            q.expansions.flatMap((w) => fuzzySlots.map((s) => wordToken(s.slot, w))),
            negate,
          );
        }
        return match(q.fields.map(slot), q.words, q.prefix, negate);
      case 'compare':
        return compare(slot(q.field), q.op, q.value, negate);
      case 'exists':
        return tokens('__has', [fieldTag(slot(q.field).slot)], negate);
      case 'equals':
        // The collection holds text as words and ranks, not whole values: exact text has nothing to match on.
        throw AppError.invalid(
          `Exact text (${q.field}:=…) is not supported by the Typesense engine; search words or phrases instead`,
        );
      case 'datePart':
        // The collection holds instants, not wall-clock parts in every zone.
        throw AppError.invalid(
          `Date parts (${q.field}:@${q.part}=…) are not supported by the Typesense engine; search a date range instead`,
        );
    }
  };

  const formula = walk(node, false);
  if (formula.kind === 'true') return { filterBy: undefined, operations: 0 };
  // Typesense counts the postfix form: every condition and every binary && or ||.
  const n = leaves(formula);
  const operations = Math.max(1, 2 * n - 1);
  if (operations > maxOperations) {
    throw AppError.invalid(
      `The query is too complex for the Typesense search backend: it needs ${operations} filter operations and at most ${maxOperations} are allowed; use fewer terms or name the fields to search`,
    );
  }
  return { filterBy: render(formula), operations };
}

/**
 * sort_by: Typesense takes three keys at most, and Quarry spends one on the record order. The score is
 * Typesense's own text match (typesense-ranking.ts), in its place among the keys.
 */
export function toSortBy(sort: SortKey[], slots: FieldSlots): string {
  if (sort.length > 2) throw AppError.invalid('The Typesense search backend sorts by at most 2 fields');
  const keys = sort.map((s) => {
    if (s.type === 'score') return `_text_match:${s.direction}`;
    const slot = slots.get(s.field);
    if (!slot) throw AppError.internal(`field ${s.field} has no Typesense slot`);
    const col = slot.type === 'string' ? `r${slot.slot}` : `k${slot.slot}`;
    return `${col}(missing_values: last):${s.direction}`;
  });
  return [...keys, '__rowid:asc'].join(',');
}

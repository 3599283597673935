import { AppError } from '@quarry/errors';
import type { CompareOp, Literal, QueryNode } from '@quarry/query-language';
import type { SortKey } from '../ports/search-index.port';

/**
 * Typesense field layout for one Quarry field at position i (names stay ASCII whatever the source):
 * - h{i} bool: has a value (Typesense cannot filter on missing values);
 * - v{i}: the value (int64 for integers and dates as epoch ms, float, bool) for filters;
 * - l{i} string: the lower-cased text, for sorting text fields;
 * - w{i} string[]: Quarry's words of a text value; b{i} string[]: adjacent word pairs, for phrases.
 * Every document also keeps `__rowid` (source order) and `__json` (the record as returned).
 */
export interface FieldSlot {
  name: string;
  type: string;
  slot: number;
}

const bt = (v: string) => `\`${v.replace(/`/g, '')}\``;

function scalar(lit: Literal): string {
  switch (lit.type) {
    case 'number':
      return String(lit.value);
    case 'boolean':
      return String(lit.value);
    case 'date':
      return String(lit.value);
    case 'string':
      throw AppError.invalid('Comparisons on text fields are not supported by the Typesense search backend');
  }
}

const OP = { eq: ':=', gt: ':>', gte: ':>=', lt: ':<', lte: ':<=' } as const;
const NEGATED: Record<CompareOp, string> = { eq: ':!=', gt: ':<=', gte: ':<', lt: ':>=', lte: ':>' };

/** Pairs of adjacent words: a phrase matches where all its pairs do (exact for phrases of two words). */
export function wordPairs(words: string[]): string[] {
  const pairs: string[] = [];
  for (let i = 0; i + 1 < words.length; i++) pairs.push(`${words[i]}_${words[i + 1]}`);
  return pairs;
}

/**
 * Translates a QueryNode to filter_by. NOT is pushed down to the leaves (De Morgan), where "not"
 * includes records without a value, as Quarry's semantics require.
 */
export function toFilterBy(node: QueryNode, slots: ReadonlyMap<string, FieldSlot>): string {
  const slot = (field: string) => {
    const s = slots.get(field);
    if (!s) throw AppError.internal(`field ${field} has no Typesense slot`);
    return s.slot;
  };

  const matchField = (i: number, words: string[], prefix: boolean, negate: boolean): string => {
    const terms: string[] = [];
    if (words.length === 1) {
      terms.push(prefix ? `w${i}:${bt(words[0])}*` : `w${i}:=[${bt(words[0])}]`);
    } else {
      const pairs = wordPairs(words);
      const last = prefix ? pairs.pop() : undefined;
      for (const p of pairs) terms.push(`b${i}:=[${bt(p)}]`);
      if (last) terms.push(`b${i}:${bt(last)}*`);
    }
    const positive = terms.length === 1 ? terms[0] : `(${terms.join(' && ')})`;
    if (!negate) return positive;
    if (words.length === 1 && !prefix) return `w${i}:![${bt(words[0])}]`;
    throw AppError.invalid('Negated prefix or phrase searches are not supported by the Typesense search backend');
  };

  const walk = (q: QueryNode, negate: boolean): string => {
    switch (q.kind) {
      case 'all':
        return negate ? '__rowid:<0' : '__rowid:>=0';
      case 'none':
        return negate ? '__rowid:>=0' : '__rowid:<0';
      case 'not':
        return walk(q.child, !negate);
      case 'and':
      case 'or': {
        const joiner = (q.kind === 'and') !== negate ? ' && ' : ' || ';
        return `(${q.children.map((c) => walk(c, negate)).join(joiner)})`;
      }
      case 'match': {
        const parts = q.fields.map((f) => matchField(slot(f), q.words, q.prefix, negate));
        if (parts.length === 0) return walk({ kind: 'none' }, negate);
        return `(${parts.join(negate ? ' && ' : ' || ')})`;
      }
      case 'compare': {
        const i = slot(q.field);
        const v = scalar(q.value);
        return negate ? `(h${i}:=false || v${i}${NEGATED[q.op]}${v})` : `(h${i}:=true && v${i}${OP[q.op]}${v})`;
      }
      case 'exists': {
        const i = slot(q.field);
        return `h${i}:=${negate ? 'false' : 'true'}`;
      }
    }
  };
  return walk(node, false);
}

/** sort_by: Typesense takes three keys at most, and Quarry spends one on the record order. */
export function toSortBy(sort: SortKey[], slots: ReadonlyMap<string, FieldSlot>): string {
  if (sort.length > 2) throw AppError.invalid('The Typesense search backend sorts by at most 2 fields');
  const keys = sort.map((s) => {
    const i = slots.get(s.field)?.slot;
    const col = s.type === 'string' ? `l${i}` : `v${i}`;
    return `${col}(missing_values: last):${s.direction}`;
  });
  return [...keys, '__rowid:asc'].join(',');
}

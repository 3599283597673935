import { positiveLeaves, type QueryNode } from '@quarry/query-language';
import { EVERY_RECORD_TOKEN, rankToken } from './typesense-encoding';
import type { FieldSlots } from './typesense-filter';

/*
 * How a ranked search asks Typesense for its text match without letting `q` decide what matches
 * (Typesense v28.0, src/index.cpp). filter_by alone says which records match; `q` only orders them:
 * - `q` requires every token (or_iterator_t::intersect), but a search with fewer results than
 *   `drop_tokens_threshold` searches again with tokens dropped from the right (right_to_left) until one
 *   token is left, then from the left. `q` starts with EVERY_RECORD_TOKEN, which `__q` holds in every
 *   document, and the threshold is above any count, so the last search from the right is that token
 *   alone: every filtered record is found, whichever words it holds (search, drop tokens loop);
 * - a record found by several of those searches keeps its best text match (Topster::add), and the
 *   dropped words it holds still count in it (compute_aggregated_score, dropped_token_its);
 * - no typos, no prefixes, no split or joined words, no synonyms or curation rules: nothing but the
 *   words themselves can match;
 * - `sum_score` adds each field's match times its weight (compute_aggregated_score), as BM25 adds up
 *   fields; `__q`'s weight is 0, so the token that finds every record adds nothing.
 */

/** Typesense's largest field weight (include/index.h FIELD_MAX_WEIGHT); larger or unsorted ones become ranks. */
export const MAX_FIELD_WEIGHT = 15;
/**
 * Words a ranked `q` holds at most: each is searched once more when dropped (twice the words in
 * searches), and a fuzzy word may bring 50. Words past it still match (filter_by) but add nothing.
 */
export const MAX_RANK_WORDS = 32;
/** Above any record count (Typesense reads it as an unsigned 32-bit number). */
const ALWAYS_DROP = 4_294_967_295;

export interface RankedQuery {
  q: string;
  query_by: string;
  query_by_weights: string;
}

/** A boost as a Typesense field weight: an integer from 1 to MAX_FIELD_WEIGHT, 0 for `^0`. */
export function fieldWeight(boost: number): number {
  if (boost <= 0) return 0;
  return Math.min(MAX_FIELD_WEIGHT, Math.max(1, Math.round(boost)));
}

/**
 * `q`, `query_by` and `query_by_weights` for the words and phrases (each word of a phrase on its own,
 * fuzzy words by their resolved expansions) outside any NOT of the score query; undefined when it has
 * none (then Typesense has nothing to match: every text match is equal). A field's weight is the
 * largest boost among the clauses that test it. Fields go heaviest first, as Typesense takes weights
 * verbatim only in descending order.
 */
export function rankedQuery(score: QueryNode, slots: FieldSlots): RankedQuery | undefined {
  const tokens: string[] = [];
  const weights = new Map<number, number>();
  for (const leaf of positiveLeaves(score)) {
    if (leaf.kind !== 'match' || leaf.prefix) continue;
    const words = leaf.fuzzy !== undefined ? (leaf.expansions ?? leaf.words) : leaf.words;
    if (words.length === 0 || leaf.fields.length === 0) continue;
    for (const w of words) {
      const t = rankToken(w);
      if (!tokens.includes(t)) tokens.push(t);
    }
    const weight = fieldWeight(leaf.boost ?? 1);
    for (const field of leaf.fields) {
      const slot = slots.get(field);
      if (!slot || slot.type !== 'string') continue;
      weights.set(slot.slot, Math.max(weights.get(slot.slot) ?? 0, weight));
    }
  }
  if (tokens.length === 0 || weights.size === 0) return undefined;
  const fields = [...weights].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return {
    q: [EVERY_RECORD_TOKEN, ...tokens.slice(0, MAX_RANK_WORDS)].join(' '),
    query_by: [...fields.map(([slot]) => `t${slot}`), '__q'].join(','),
    query_by_weights: [...fields.map(([, w]) => w), 0].join(','),
  };
}

/** The parameters that keep a ranked `q` from adding or dropping a match (see above). */
export const RANKED_SEARCH = {
  text_match_type: 'sum_score',
  num_typos: 0,
  prefix: false,
  drop_tokens_threshold: ALWAYS_DROP,
  drop_tokens_mode: 'right_to_left',
  typo_tokens_threshold: 0,
  exhaustive_search: false,
  split_join_tokens: 'off',
  enable_synonyms: false,
  enable_overrides: false,
  prioritize_exact_match: true,
  prioritize_token_position: false,
  prioritize_num_matching_fields: false,
} as const;

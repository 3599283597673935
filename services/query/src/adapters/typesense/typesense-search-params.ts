import type { MultiSearchRequestSchema } from 'typesense/lib/Typesense/Types';
import type { DocumentSchema } from 'typesense/lib/Typesense/Documents';
import { AppError } from '@quarry/errors';
import { hasFuzzy, resolveFuzzy, type QueryNode } from '@quarry/query-language';
import type { FacetRequest, SearchPlan } from '../../ports/search-index.port';
import { blankFilter, FACET_MAX_VALUES, facetParams, facetSlots } from './typesense-facets';
import { toFilterBy, toSortBy, type FieldSlot, type FieldSlots } from './typesense-filter';
import { RANKED_SEARCH, rankedQuery } from './typesense-ranking';

export type Search = MultiSearchRequestSchema<DocumentSchema, string>;

/**
 * Prefix filters longer than the stored prefixes expand to the words that start so, and Typesense
 * stops at `max_filter_by_candidates` words (4 by default), dropping the rest silently
 * (src/index.cpp fuzzy_search_fields, src/art.cpp art_fuzzy_search_i). This is the largest value it
 * accepts (an unsigned 32-bit number, src/collection.cpp add_unsigned_int_param): no index has more words.
 */
export const ALL_CANDIDATES = 4_294_967_295;

export interface SearchRequest {
  /** Every search of the page is this with its own offset and limit. */
  base: Search;
  filterBy: string | undefined;
  /** Operations of filterBy, as Typesense counts them. */
  operations: number;
  /** Whether `q` holds words, so that each hit carries a text match. */
  ranked: boolean;
}

/**
 * The page's search: filter_by decides what matches; with a score query, `q` holds its words for
 * Typesense's text match (typesense-ranking.ts), which a `_score` sort key orders by.
 */
export function searchRequest(
  collection: string,
  plan: Pick<SearchPlan, 'where' | 'score' | 'sort'>,
  slots: FieldSlots,
  options: { maxHits: number; maxFilterOperations: number },
): SearchRequest {
  const { filterBy, operations } = toFilterBy(plan.where, slots, options.maxFilterOperations);
  const ranked = plan.score ? rankedQuery(plan.score, slots) : undefined;
  const base: Search = {
    collection,
    q: '*',
    include_fields: '__json',
    sort_by: toSortBy(plan.sort, slots),
    limit_hits: options.maxHits,
    max_filter_by_candidates: ALL_CANDIDATES,
    ...(filterBy === undefined ? {} : { filter_by: filterBy }),
    ...(ranked ? { ...ranked, ...RANKED_SEARCH } : {}),
  };
  return { base, filterBy, operations, ranked: ranked !== undefined };
}

/**
 * The query (and score query) with each fuzzy word resolved into the version's words within its edits,
 * exactly as the embedded engines resolve it (relevance.ts fuzzyExpansions over the snapshot's own
 * vocabulary): filter_by has no edit distance, and Typesense's typo tolerance counts edits on its
 * tokens, in `q` only, which requires every word. The vocabulary is read only when a word is fuzzy.
 */
export async function resolveFuzzyWords(
  plan: Pick<SearchPlan, 'where' | 'score'>,
  vocabulary: () => Promise<{ vocabulary(fields: readonly string[]): Iterable<string> }>,
): Promise<{ where: QueryNode; score?: QueryNode }> {
  if (!hasFuzzy(plan.where) && !(plan.score && hasFuzzy(plan.score))) return plan;
  const terms = await vocabulary();
  const words = (fields: readonly string[]) => terms.vocabulary(fields);
  return {
    where: resolveFuzzy(plan.where, words),
    ...(plan.score ? { score: resolveFuzzy(plan.score, words) } : {}),
  };
}

/** The searches a page's facets take: one counting every facet, one per facet for its blanks. */
export function facetSearches(
  collection: string,
  request: Pick<SearchRequest, 'filterBy' | 'operations'>,
  facets: readonly FacetRequest[],
  slots: FieldSlots,
  options: { maxHits: number; maxFilterOperations: number },
): { slots: FieldSlot[]; asked: number; counts: Search; blanks: Search[] } {
  const fieldSlots = facetSlots(facets, slots);
  // A blank count adds one condition and one && to the filter.
  if (request.filterBy !== undefined && request.operations + 2 > options.maxFilterOperations) {
    throw AppError.invalid(
      `The query is too complex for the Typesense search backend to count facets on: it needs ${request.operations + 2} filter operations and at most ${options.maxFilterOperations} are allowed; use fewer terms`,
    );
  }
  const base: Search = {
    collection,
    q: '*',
    include_fields: '__json',
    limit_hits: options.maxHits,
    max_filter_by_candidates: ALL_CANDIDATES,
    offset: 0,
    limit: 0,
    ...(request.filterBy === undefined ? {} : { filter_by: request.filterBy }),
  };
  // One more than the largest limit: a value past it tells whether the last listed one ties.
  const asked = Math.min(FACET_MAX_VALUES, Math.max(...facets.map((f) => f.limit)) + 1);
  return {
    slots: fieldSlots,
    asked,
    counts: { ...base, ...facetParams(fieldSlots, asked) },
    blanks: fieldSlots.map((s) => ({ ...base, filter_by: blankFilter(request.filterBy, s) })),
  };
}

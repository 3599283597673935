import { parseQuery, type FieldDef, type QueryNode } from '@quarry/query-language';
import type { SearchPlan, SortKey } from '../../ports/search-index.port';
import { slotsOf } from './typesense-filter';
import { RANKED_SEARCH } from './typesense-ranking';
import { ALL_CANDIDATES, facetSearches, resolveFuzzyWords, searchRequest } from './typesense-search-params';

const FIELDS: FieldDef[] = [
  { name: 'title', type: 'string' },
  { name: 'year', type: 'integer' },
  { name: 'body', type: 'string' },
];
const slots = slotsOf(FIELDS);
const LIMITS = { maxHits: 1000, maxFilterOperations: 100 };
const parse = (q: string) => parseQuery(q, { fields: FIELDS, now: 0 });
const SCORE: SortKey = { field: '_score', type: 'score', direction: 'desc' };
const YEAR: SortKey = { field: 'year', type: 'integer', direction: 'asc' };
const request = (plan: Pick<SearchPlan, 'where' | 'score' | 'sort'>) => searchRequest('books__v1', plan, slots, LIMITS);

describe('Typesense search parameters', () => {
  it('without a score query: every record by filter_by, q `*`, no text match asked for', () => {
    const r = request({ where: parse('ada'), sort: [YEAR] });
    expect(r.ranked).toBe(false);
    expect(r.base).toEqual({
      collection: 'books__v1',
      q: '*',
      include_fields: '__json',
      sort_by: 'k1(missing_values: last):asc,__rowid:asc',
      limit_hits: 1000,
      max_filter_by_candidates: ALL_CANDIDATES,
      filter_by: '__w:=[0z8ada,2z8ada]',
    });
  });

  it('ranks by Typesense text match with the filter still deciding the matches', () => {
    const where = parse('ada OR grace');
    const r = request({ where, score: where, sort: [SCORE, YEAR] });
    expect(r.ranked).toBe(true);
    expect(r.base).toMatchObject({
      q: 'z7 ada grace',
      query_by: 't0,t2,__q',
      query_by_weights: '1,1,0',
      filter_by: '(__w:=[0z8ada,2z8ada] || __w:=[0z8grace,2z8grace])',
      sort_by: '_text_match:desc,k1(missing_values: last):asc,__rowid:asc',
    });
  });

  it('sets every parameter that could let q add or drop a match', () => {
    const where = parse('ada grace');
    const { base } = request({ where, score: where, sort: [SCORE] });
    expect(base).toMatchObject({
      text_match_type: 'sum_score',
      num_typos: 0,
      prefix: false,
      drop_tokens_threshold: 4_294_967_295,
      drop_tokens_mode: 'right_to_left',
      split_join_tokens: 'off',
      enable_synonyms: false,
      enable_overrides: false,
      exhaustive_search: false,
    });
    expect(base).toMatchObject(RANKED_SEARCH);
  });

  it('sorts by text match ascending too, and by fields before it', () => {
    const where = parse('ada');
    expect(request({ where, score: where, sort: [{ ...SCORE, direction: 'asc' }] }).base.sort_by).toBe(
      '_text_match:asc,__rowid:asc',
    );
    expect(request({ where, score: where, sort: [YEAR, SCORE] }).base.sort_by).toBe(
      'k1(missing_values: last):asc,_text_match:desc,__rowid:asc',
    );
  });

  it('counts _score among the 2 sort fields Typesense leaves Quarry', () => {
    const where = parse('ada');
    const third: SortKey = { field: 'title', type: 'string', direction: 'asc' };
    expect(() => request({ where, score: where, sort: [SCORE, YEAR, third] })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', detail: expect.stringContaining('at most 2 fields') }),
    );
  });

  it('keeps q `*` for a score query without words (prefixes, ranges): nothing for Typesense to match', () => {
    const where = parse('ad* year:[1 TO 3]');
    const r = request({ where, score: where, sort: [SCORE] });
    expect(r.ranked).toBe(false);
    expect(r.base.q).toBe('*');
    expect(r.base.query_by).toBeUndefined();
  });
});

describe('Typesense fuzzy words', () => {
  const vocabulary = ['colour', 'color', 'colours', 'dolour', 'cool'];
  const terms = jest.fn(async () => ({ vocabulary: () => vocabulary }));
  beforeEach(() => terms.mockClear());

  it('resolve against the version vocabulary, then match as the words found (filter) and rank by them (q)', async () => {
    const where = parse('body:colour~1');
    const resolved = await resolveFuzzyWords({ where, score: where }, terms);
    const leaf = resolved.where as Extract<QueryNode, { kind: 'match' }>;
    expect(leaf.expansions).toEqual(['colour', 'color', 'colours', 'dolour']);
    expect(resolved.score).toEqual(resolved.where);
    const r = request({ ...resolved, sort: [SCORE] });
    expect(r.base.filter_by).toBe('__w:=[2z8colour,2z8color,2z8colours,2z8dolour]');
    expect(r.base.q).toBe('z7 colour color colours dolour');
    expect(r.base.num_typos).toBe(0);
  });

  it('under NOT keep every record holding none of the words found', async () => {
    const resolved = await resolveFuzzyWords({ where: parse('NOT body:colour~1') }, terms);
    expect(request({ ...resolved, sort: [] }).base.filter_by).toBe('__w:!=[2z8colour,2z8color,2z8colours,2z8dolour]');
  });

  it('match nothing when no word of the version is near enough', async () => {
    const resolved = await resolveFuzzyWords({ where: parse('body:zzzzzz~1') }, terms);
    expect(request({ ...resolved, sort: [] }).base.filter_by).toBe('__rowid:<0');
  });

  it('read the vocabulary only when the query has a fuzzy word', async () => {
    const where = parse('colour');
    expect(await resolveFuzzyWords({ where, score: where }, terms)).toEqual({ where, score: where });
    expect(terms).not.toHaveBeenCalled();
  });
});

describe('Typesense facet searches', () => {
  const facets = [
    { field: 'year', type: 'integer' as const, limit: 5 },
    { field: 'title', type: 'string' as const, limit: 3 },
  ];

  it('count every facet over the filter in one search, unsampled, one value past the largest limit', () => {
    const r = request({ where: parse('ada'), sort: [] });
    const s = facetSearches('books__v1', r, facets, slots, LIMITS);
    expect(s.counts).toEqual({
      collection: 'books__v1',
      q: '*',
      include_fields: '__json',
      limit_hits: 1000,
      max_filter_by_candidates: ALL_CANDIDATES,
      offset: 0,
      limit: 0,
      filter_by: '__w:=[0z8ada,2z8ada]',
      facet_by: 'k1,f0',
      max_facet_values: 6,
      facet_strategy: 'exhaustive',
      facet_sample_percent: 100,
    });
    expect(s.asked).toBe(6);
  });

  it('count each facet blanks as the matches without the field', () => {
    const s = facetSearches('books__v1', request({ where: parse('ada'), sort: [] }), facets, slots, LIMITS);
    expect(s.blanks.map((b) => b.filter_by)).toEqual([
      '(__w:=[0z8ada,2z8ada]) && __has:!=[1z8]',
      '(__w:=[0z8ada,2z8ada]) && __has:!=[0z8]',
    ]);
    const all = facetSearches('books__v1', request({ where: parse('*'), sort: [] }), facets, slots, LIMITS);
    expect(all.counts.filter_by).toBeUndefined();
    expect(all.blanks.map((b) => b.filter_by)).toEqual(['__has:!=[1z8]', '__has:!=[0z8]']);
  });

  it('refuse a filter too long for its blank count', () => {
    const r = request({ where: parse('ada'), sort: [] });
    expect(() => facetSearches('c', r, facets, slots, { ...LIMITS, maxFilterOperations: 2 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

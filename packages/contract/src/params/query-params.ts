import { z } from 'zod';
import * as L from '../limits';
import { arrayOf, intInRange, keywordOf, optionalString, PARAM, requiredString } from './param-builders';
import { cacheParam, saveReportParam } from './shared-params';

const sortItem = z.strictObject(
  {
    field: requiredString(L.FIELD_NAME_MAX),
    direction: keywordOf(L.SORT_DIRECTIONS, (v) => `must be "asc" or "desc", got ${v}`, { blankMeansDefault: true })
      .optional()
      .meta({ default: 'asc' }),
  },
  { error: `${PARAM} must be an object with field and direction` },
);

const highlightParam = z
  .strictObject(
    {
      fields: arrayOf(requiredString(L.FIELD_NAME_MAX), L.MAX_HIGHLIGHT_FIELDS)
        .optional()
        .meta({ description: "Text fields to highlight; absent: those the query's words test." }),
      fragmentSize: intInRange(L.MIN_FRAGMENT_SIZE, L.MAX_FRAGMENT_SIZE)
        .optional()
        .meta({ default: L.DEFAULT_FRAGMENT_SIZE, description: 'Characters of text around the first match, at most.' }),
    },
    { error: `${PARAM} must be an object with fields and fragmentSize` },
  )
  .meta({
    description:
      'data.highlights: per record, field → a fragment with the matched words in <mark>…</mark> and everything else HTML-escaped.',
  });

const facetItem = z.strictObject(
  {
    field: requiredString(L.FIELD_NAME_MAX),
    limit: intInRange(1, L.MAX_FACET_LIMIT).optional().meta({ default: L.DEFAULT_FACET_LIMIT }),
  },
  { error: `${PARAM} must be an object with field and limit` },
);

export const queriesExecuteParams = z
  .strictObject({
    index: requiredString(L.INDEX_NAME_MAX).meta({ description: 'The index to search.' }),
    query: optionalString(L.QUERY_MAX_LENGTH).meta({
      description:
        'Query text in Quarry\'s query language (README "Query language"); empty or absent matches every record.',
      default: '*',
    }),
    page: intInRange(1, L.INT32_MAX).meta({ default: L.DEFAULT_PAGE }),
    pageSize: intInRange(1, L.MAX_PAGE_SIZE).meta({ default: L.DEFAULT_PAGE_SIZE }),
    sort: arrayOf(sortItem, L.MAX_SORT_KEYS)
      .optional()
      .meta({
        description: `Sort keys, most significant first; ties keep load order. "${L.SCORE_FIELD}" is the relevance score. Absent, a query with words, phrases or fuzzy words ranks by relevance (data.scores), any other keeps load order.`,
      }),
    highlight: highlightParam.optional(),
    facets: arrayOf(facetItem, L.MAX_FACETS).optional().meta({
      description:
        "data.facets: each field's most frequent values over every matching record (realms applied), exact counts, blanks as (blank).",
    }),
    cache: cacheParam,
    saveReport: saveReportParam.optional(),
  })
  .meta({ title: 'QueriesExecuteParams' });

export const queriesReplayParams = z
  .strictObject({
    token: requiredString(L.REPLAY_TOKEN_MAX).meta({
      description: 'meta.replay of a QUERIES.EXECUTE, CROSSTAB.EXECUTE or REPORTS.EXECUTE answer, as it was given.',
    }),
    cache: cacheParam,
  })
  .meta({ title: 'QueriesReplayParams' });

export const indexesFindParams = z
  .strictObject({
    searchText: optionalString(L.SEARCH_TEXT_MAX).meta({
      description: 'Words matched against index names and descriptions.',
    }),
    cursor: optionalString(L.CURSOR_MAX).meta({ description: 'nextCursor of the previous page.' }),
    limit: intInRange(1, L.MAX_INDEX_LIMIT).meta({ default: L.DEFAULT_INDEX_LIMIT }),
  })
  .meta({ title: 'IndexesFindParams' });

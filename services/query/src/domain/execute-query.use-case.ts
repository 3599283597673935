import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import {
  FieldResolver,
  hasScoringClauses,
  highlightRecords,
  parseQuery,
  restrictedQuery,
  restrictedTree,
  type FieldDef,
  type QueryNode,
  type Reader,
} from '@quarry/query-language';
import type { ResultCache, SharedComputations } from '@quarry/result-cache';
import type { FacetCounts, FacetRequest, SearchIndex, SearchPage, SortKey } from '../ports/search-index.port';
import { SCORE_FIELD } from '@quarry/contract';
import { fieldsOf, readableIndex } from '@quarry/snapshots/access';

import type { CacheStatus, CompleteSearch } from '@quarry/contract';

/** A search as the contract completed it: its defaults and limits applied before the call reached the service. */
export type ExecuteQueryInput = CompleteSearch;

export interface ExecuteQueryOutput {
  index: string;
  query: string;
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
  fields: FieldDef[];
  recordsJson: string;
  cache: CacheStatus;
  /** The version of the index the search ran on. */
  indexVersion: number;
  /** The SHA-256 of that version's records file; '' for a version written before it was kept. */
  snapshotSha256: string;
  /** The engine that computed the page (the one that first did, for a cache hit). */
  engine: string;
  /** data.scores / data.highlights / data.facets, when the search asked for them. */
  scores?: number[];
  highlights?: Array<Record<string, string>>;
  facets?: FacetCounts[];
}

export interface ExecuteQueryOptions {
  signal?: AbortSignal;
  /** false: neither read nor write the result cache for this call (the `cache` param). */
  cache?: boolean;
  /** Run on this published version (a saved report's snapshot) instead of the current one. */
  asOfVersion?: number;
  /** The time relative dates are read at (Unix ms; a replay's first run's), else now. */
  now?: number;
  /**
   * Runs the engine call under the process's cap on heavy calls; a cache hit does not take a slot.
   * `signal` is the computation's (shared by identical calls: it aborts once every one has given up).
   */
  heavy?: <T>(work: () => Promise<T>, signal: AbortSignal | undefined) => Promise<T>;
}

function sortKeys(fields: FieldResolver, sort: ExecuteQueryInput['sort']): SortKey[] {
  return sort.map((s, i) => {
    if (s.field === SCORE_FIELD) return { field: SCORE_FIELD, type: 'score', direction: s.direction };
    const field = fields.find(s.field);
    if (!field) throw AppError.invalid(`sort[${i}].field: unknown field ${quoteInput(s.field)}`);
    return { field: field.name, type: field.type, direction: s.direction };
  });
}

function facetRequests(fields: FieldResolver, facets: ExecuteQueryInput['facets']): FacetRequest[] | undefined {
  return facets?.map((f, i) => {
    const field = fields.find(f.field);
    if (!field) throw AppError.invalid(`facets[${i}].field: unknown field ${quoteInput(f.field)}`);
    return { field: field.name, type: field.type, limit: f.limit };
  });
}

function highlightFields(fields: FieldResolver, names: readonly string[] | undefined): string[] | undefined {
  return names?.map((name, i) => {
    const field = fields.find(name);
    if (!field) throw AppError.invalid(`highlight.fields[${i}]: unknown field ${quoteInput(name)}`);
    if (field.type !== 'string')
      throw AppError.invalid(`highlight.fields[${i}]: ${quoteInput(field.name)} is not a text field`);
    return field.name;
  });
}

/** What a search's cache entry keeps beside its records. */
interface Extra {
  scores?: number[];
  resolved?: QueryNode;
  facets?: FacetCounts[];
}

/** QUERIES.EXECUTE: permissions, the query with the caller's realms, paging and sorting. */
export class ExecuteQueryUseCase {
  constructor(
    private readonly catalog: IndexCatalog,
    private readonly search: SearchIndex,
    private readonly cache: ResultCache,
    private readonly now: () => number = Date.now,
    /** Identical searches in flight computed once (absent: each call computes its own). */
    private readonly shared?: SharedComputations,
  ) {}

  async searchIndex(
    reader: Reader,
    input: ExecuteQueryInput,
    opts: ExecuteQueryOptions = {},
  ): Promise<ExecuteQueryOutput> {
    const { page, pageSize } = input;
    const entry = await readableIndex(this.catalog, reader, input.index, {
      onUnpublished: (gone) => this.search.forget(gone),
      version: opts.asOfVersion,
    });
    const fields = fieldsOf(entry);
    const parse = { fields, now: opts.now ?? this.now() };
    const user = parseQuery(input.query, parse);
    const where = restrictedTree(reader, entry.name, user, parse);
    const resolver = new FieldResolver(fields);
    const explicit = sortKeys(resolver, input.sort);
    // Without a sort, words rank (DESIGN "Search that ranks"); filters alone keep load order.
    const ranked = explicit.length === 0 && hasScoringClauses(user);
    const sort: SortKey[] = ranked ? [{ field: SCORE_FIELD, type: 'score', direction: 'desc' }] : explicit;
    const scored = ranked || explicit.some((s) => s.type === 'score');
    const facets = facetRequests(resolver, input.facets);
    const highlight = input.highlight && {
      fields: highlightFields(resolver, input.highlight.fields),
      fragmentSize: input.highlight.fragmentSize,
    };
    // Scores are the caller's query alone, never its realms: the same record scores the same for everyone.
    const score = scored || highlight ? user : undefined;
    const offset = (page - 1) * pageSize;
    const { result, cache } = await this.cachedSearch(
      opts,
      // The snapshot file is new with every load, so a reload or a drop and re-load never meets old entries;
      // `where` is the compiled query with the caller's realms in it, so callers with other realms never share.
      [
        'query',
        entry.name,
        entry.version,
        entry.snapshot,
        where,
        sort,
        offset,
        pageSize,
        score ?? null,
        facets ?? null,
      ],
      (signal) => this.search.search(entry, { where, score, sort, offset, limit: pageSize, signal, facets }),
    );
    const highlights =
      highlight && result.resolved
        ? highlightRecords(JSON.parse(result.recordsJson) as Array<Record<string, unknown>>, result.resolved, {
            ...(highlight.fields ? { fields: highlight.fields } : {}),
            fragmentSize: highlight.fragmentSize,
          })
        : undefined;
    return {
      index: entry.name,
      query: input.query.trim() === '' ? '*' : input.query,
      page,
      pageSize,
      total: result.total,
      totalPages: Math.ceil(result.total / pageSize),
      fields,
      recordsJson: result.recordsJson,
      cache,
      indexVersion: entry.version,
      snapshotSha256: entry.sha256 ?? '',
      engine: result.engine,
      ...(scored && result.scores ? { scores: result.scores } : {}),
      ...(highlights ? { highlights } : {}),
      ...(result.facets ? { facets: result.facets } : {}),
    };
  }

  /**
   * How many records of the index this reader may read (INDEXES.FIND for a realm-restricted caller): the
   * realm's count, never the index's. A realm that no longer fits the index lets it read nothing.
   */
  async countReadable(reader: Reader, entry: IndexEntry, opts: ExecuteQueryOptions = {}): Promise<number> {
    let where;
    try {
      where = restrictedQuery(reader, entry.name, '*', { fields: fieldsOf(entry), now: this.now() });
    } catch (err) {
      if (err instanceof AppError && err.code === 'FORBIDDEN') return 0;
      throw err;
    }
    const { result } = await this.cachedSearch(
      opts,
      ['count', entry.name, entry.version, entry.snapshot, where],
      (signal) => this.search.search(entry, { where, sort: [], offset: 0, limit: 0, signal }),
    );
    return result.total;
  }

  private async cachedSearch(
    opts: ExecuteQueryOptions,
    key: unknown[],
    search: (signal: AbortSignal | undefined) => Promise<SearchPage>,
  ): Promise<{ result: SearchPage; cache: CacheStatus }> {
    const use = opts.cache !== false && this.cache.enabled;
    const found = use ? this.cache.get(key) : undefined;
    // A search's entries hold JSON text; only a crosstab's workbook is kept as bytes.
    if (found && typeof found.payload === 'string') {
      const extra = found.extra ? (JSON.parse(found.extra) as Extra) : {};
      return {
        result: { total: found.counts[0], recordsJson: found.payload, engine: found.engine ?? '', ...extra },
        cache: 'hit',
      };
    }
    const compute = (signal: AbortSignal | undefined) =>
      opts.heavy ? opts.heavy(() => search(signal), signal) : search(signal);
    const result = await (this.shared ? this.shared.run([...key, use], opts.signal, compute) : compute(opts.signal));
    if (!use) return { result, cache: 'bypass' };
    const extra: Extra = {
      ...(result.scores ? { scores: result.scores } : {}),
      ...(result.resolved ? { resolved: result.resolved } : {}),
      ...(result.facets ? { facets: result.facets } : {}),
    };
    this.cache.set(key, {
      payload: result.recordsJson,
      counts: [result.total],
      engine: result.engine,
      ...(Object.keys(extra).length ? { extra: JSON.stringify(extra) } : {}),
    });
    return { result, cache: 'miss' };
  }
}

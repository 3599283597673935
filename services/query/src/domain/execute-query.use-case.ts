import { AppError, quoteInput } from '@quarry/errors';
import type { IndexCatalog, IndexEntry } from '@quarry/metadata-store';
import { FieldResolver, restrictedQuery, type FieldDef, type Reader } from '@quarry/query-language';
import type { ResultCache, SharedComputations } from '@quarry/result-cache';
import type { SearchIndex, SearchPage, SortKey } from '../ports/search-index.port';
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
    const field = fields.find(s.field);
    if (!field) throw AppError.invalid(`sort[${i}].field: unknown field ${quoteInput(s.field)}`);
    return { field: field.name, type: field.type, direction: s.direction };
  });
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
    const where = restrictedQuery(reader, entry.name, input.query, { fields, now: opts.now ?? this.now() });
    const sort = sortKeys(new FieldResolver(fields), input.sort);
    const offset = (page - 1) * pageSize;
    const { result, cache } = await this.cachedSearch(
      opts,
      // The snapshot file is new with every load, so a reload or a drop and re-load never meets old entries;
      // `where` is the compiled query with the caller's realms in it, so callers with other realms never share.
      ['query', entry.name, entry.version, entry.snapshot, where, sort, offset, pageSize],
      (signal) => this.search.search(entry, { where, sort, offset, limit: pageSize, signal }),
    );
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
    if (found && typeof found.payload === 'string')
      return {
        result: { total: found.counts[0], recordsJson: found.payload, engine: found.engine ?? '' },
        cache: 'hit',
      };
    const compute = (signal: AbortSignal | undefined) =>
      opts.heavy ? opts.heavy(() => search(signal), signal) : search(signal);
    const result = await (this.shared ? this.shared.run([...key, use], opts.signal, compute) : compute(opts.signal));
    if (!use) return { result, cache: 'bypass' };
    this.cache.set(key, { payload: result.recordsJson, counts: [result.total], engine: result.engine });
    return { result, cache: 'miss' };
  }
}

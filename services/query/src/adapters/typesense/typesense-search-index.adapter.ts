import { Client } from 'typesense';
import { AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import type { SnapshotEngine } from '@quarry/snapshots';
import type { FacetCounts, FacetRequest, SearchIndex, SearchPage, SearchPlan } from '../../ports/search-index.port';
import { collectionFields, documentBatches } from './typesense-documents';
import { facetCounts, facetField, facetParams, moreValuesNeeded, readFacet } from './typesense-facets';
import { DEFAULT_MAX_FILTER_OPS, slotsOf, type FieldSlots } from './typesense-filter';
import {
  backendError,
  beyondMaxHits,
  checkImport,
  collectionName,
  DEFAULT_MAX_HITS,
  planPage,
  readSearchResults,
  staleCollections,
  type SearchResult,
} from './typesense-protocol';
import { DEFAULT_RETRY, withConnectionRetry, type RetryPolicy } from './typesense-retry';
import {
  facetSearches,
  resolveFuzzyWords,
  searchRequest,
  type Search,
  type SearchRequest,
} from './typesense-search-params';

const IMPORT_BATCH = 5000;

export interface TypesenseSearchOptions {
  /** Hits Typesense serves per query (its `limit_hits`); pages past it are served only in record order. */
  maxHits?: number;
  /** Typesense's `--filter-by-max-ops`: longer filters are refused before they are sent. */
  maxFilterOperations?: number;
  /** Documents per import request. */
  importBatch?: number;
  /** Seconds a request may take before it fails (typesense-js `connectionTimeoutSeconds`); 10 by default. */
  timeoutSeconds?: number;
  /** Retries of requests that never reached Typesense (typesense-retry.ts). */
  retry?: RetryPolicy;
}

/**
 * The client would retry timeouts and 5xx too, while the first request still runs:
 * every call goes through TypesenseSearchIndex.call instead, which retries connection errors only. Its
 * own retries cannot be turned off by option: typesense-js 2.1 reads `numRetries: 0` as unset and makes
 * it 3 (Configuration: `(…numRetries…) || 3`), so the count is set on the ApiCall every request of the
 * client goes through (ApiCall.performRequest loops while numTries <= numRetriesPerRequest + 1).
 * typesense-retry.int.test.ts counts the requests a timed-out search sends.
 */
function disableClientRetries(client: Client): void {
  const apiCall: unknown = (client as unknown as { apiCall?: unknown }).apiCall;
  if (
    typeof apiCall !== 'object' ||
    apiCall === null ||
    typeof Reflect.get(apiCall, 'numRetriesPerRequest') !== 'number'
  )
    throw new Error('typesense-js no longer keeps numRetriesPerRequest on client.apiCall: review disableClientRetries');
  Reflect.set(apiCall, 'numRetriesPerRequest', 0);
}

function cancelled(signal: AbortSignal): AppError {
  return signal.reason instanceof AppError
    ? signal.reason
    : AppError.timeout('The query was cancelled before it finished');
}

/**
 * Production search on Typesense. Text matching uses Quarry's own word split on tokens Typesense keeps
 * verbatim, with no typo tolerance, and every number is an exact int64 key, so results match the
 * DuckDB adapter's (see typesense-encoding.ts). A fuzzy word is resolved against the snapshot's own
 * vocabulary (the one thing a search reads from the snapshot, and only then), so it matches what the
 * embedded engines match. Ranking is Typesense's text match, never a filter (typesense-ranking.ts);
 * facets are its exact counts (typesense-facets.ts).
 *
 * Versions: one collection per snapshot. Searches name the collection of the catalog entry they were
 * given, exactly as the embedded engine reads that entry's snapshot: the catalog publish and the alias
 * swap are two writes to two stores, and between them (or forever, if the loader dies there) the alias
 * names another version than the catalog, whose fields may differ. The alias still follows the
 * published version, for operators and tools. A publish keeps the previous collection, which readers
 * that fetched the previous entry just before the publish still name, and deletes the older ones.
 */
export class TypesenseSearchIndex implements SearchIndex {
  private readonly client: Client;
  private readonly maxHits: number;
  private readonly maxFilterOperations: number;
  private readonly importBatch: number;
  private readonly retry: RetryPolicy;

  constructor(
    settings: { url: string; apiKey: string },
    private readonly engine: SnapshotEngine,
    options: TypesenseSearchOptions = {},
  ) {
    const url = new URL(settings.url);
    this.client = new Client({
      nodes: [
        {
          host: url.hostname,
          port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          protocol: url.protocol.replace(':', ''),
        },
      ],
      apiKey: settings.apiKey,
      connectionTimeoutSeconds: options.timeoutSeconds ?? 10,
      // The client's own warnings ("Request to Node 0 failed due to ECONNREFUSED") go to the console, not to
      // Quarry's log; this adapter reports every failure itself, as an AppError with the request id.
      logLevel: 'error',
    });
    disableClientRetries(this.client);
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.maxHits = options.maxHits ?? DEFAULT_MAX_HITS;
    this.maxFilterOperations = options.maxFilterOperations ?? DEFAULT_MAX_FILTER_OPS;
    this.importBatch = options.importBatch ?? IMPORT_BATCH;
  }

  async prepare(entry: IndexEntry): Promise<void> {
    const name = collectionName(entry);
    const slots = [...slotsOf(entry.fields).values()];
    await this.call(() =>
      this.client
        .collections()
        .create({ name, fields: collectionFields(slots), default_sorting_field: '__rowid' } as never),
    ).catch((err: unknown) => {
      throw backendError(err, `creating collection ${name}`);
    });
    try {
      for await (const batch of documentBatches(this.engine, entry, slots, this.importBatch)) {
        // JSONL text, so typesense-js hands back every line instead of throwing on the first failure;
        // upsert, so a batch sent again does not fail on its own documents.
        const answer = await this.call(() =>
          this.client.collections(name).documents().import(batch.jsonl, { action: 'upsert' }),
        ).catch((err: unknown) => {
          throw backendError(err, `importing records into ${name}`);
        });
        checkImport(answer, batch.rowids);
      }
    } catch (err) {
      await this.client
        .collections(name)
        .delete()
        .catch(() => undefined);
      throw err;
    }
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    const slots = slotsOf(entry.fields);
    const { where, score } = await resolveFuzzyWords(plan, () => this.engine.terms(entry));
    const collection = collectionName(entry);
    const limits = { maxHits: this.maxHits, maxFilterOperations: this.maxFilterOperations };
    const request = searchRequest(collection, { where, score, sort: plan.sort }, slots, limits);
    const [page, facets] = await Promise.all([
      this.pageOf(request, plan),
      plan.facets?.length ? this.facets(collection, request, plan.facets, slots, plan.signal) : undefined,
    ]);
    return {
      ...page,
      // What highlights mark: the score query with its fuzzy words resolved as matching resolved them.
      ...(score ? { resolved: score } : {}),
      ...(facets ? { facets } : {}),
    };
  }

  private async pageOf(request: SearchRequest, plan: SearchPlan): Promise<SearchPage> {
    const { base, filterBy, ranked } = request;
    const scored = plan.score !== undefined;
    const page = planPage(plan.offset, plan.limit, {
      maxHits: this.maxHits,
      allInRecordOrder: filterBy === undefined && plan.sort.length === 0,
    });
    switch (page.kind) {
      case 'offset': {
        const results = await this.run(
          page.requests.map((r) => ({ ...base, offset: r.offset, limit: r.limit })),
          plan.signal,
          ranked,
        );
        return this.page(results[0].found, results, scored);
      }
      case 'rowid': {
        const [count, ...results] = await this.run(
          [
            { ...base, offset: 0, limit: 0 },
            ...page.requests.map((r) => ({
              ...base,
              filter_by: `__rowid:[${r.from}..${r.to}]`,
              offset: 0,
              limit: r.to - r.from + 1,
            })),
          ],
          plan.signal,
          ranked,
        );
        return this.page(count.found, results, scored);
      }
      case 'beyond': {
        const [count] = await this.run([{ ...base, offset: 0, limit: 0 }], plan.signal, ranked);
        if (plan.offset >= count.found)
          return { total: count.found, recordsJson: '[]', engine: 'typesense', ...(scored ? { scores: [] } : {}) };
        throw beyondMaxHits(this.maxHits);
      }
    }
  }

  /** Facets over every match of the filter: the counts, each facet's blanks, and more values where ties need them. */
  private async facets(
    collection: string,
    request: SearchRequest,
    requests: readonly FacetRequest[],
    slots: FieldSlots,
    signal: AbortSignal | undefined,
  ): Promise<FacetCounts[]> {
    const searches = facetSearches(collection, request, requests, slots, {
      maxHits: this.maxHits,
      maxFilterOperations: this.maxFilterOperations,
    });
    const [counts, ...blanks] = await this.run([searches.counts, ...searches.blanks], signal, false);
    return Promise.all(
      requests.map(async (r, i) => {
        const slot = searches.slots[i];
        const name = facetField(slot);
        let answer = readFacet(
          counts.facets.find((f) => f.field_name === name),
          r.field,
        );
        let asked = searches.asked;
        for (let more = moreValuesNeeded(answer, asked, r.limit, blanks[i].found); more !== null;) {
          const [again] = await this.run([{ ...searches.counts, ...facetParams([slot], more) }], signal, false);
          answer = readFacet(
            again.facets.find((f) => f.field_name === name),
            r.field,
          );
          asked = more;
          more = moreValuesNeeded(answer, asked, r.limit, blanks[i].found);
        }
        return facetCounts(r, slot, answer, blanks[i].found, counts.found);
      }),
    );
  }

  /** Every request goes through here: sent again only if it never reached Typesense. */
  private call<T>(op: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return withConnectionRetry(op, this.retry, signal);
  }

  /**
   * With a score query the page carries Typesense's text match of each record as its score (0 for
   * all when the query has no words to match).
   */
  private page(total: number, results: SearchResult[], scored: boolean): SearchPage {
    const recordsJson = `[${results.flatMap((r) => r.records).join(',')}]`;
    if (!scored) return { total, recordsJson, engine: 'typesense' };
    const scores = results.flatMap((r) => r.scores ?? r.records.map(() => 0));
    return { total, recordsJson, engine: 'typesense', scores };
  }

  /** One POST to /multi_search: the filter travels in the body, which has no length limit. */
  private async run(searches: Search[], signal: AbortSignal | undefined, ranked: boolean): Promise<SearchResult[]> {
    if (signal?.aborted) throw cancelled(signal);
    try {
      const answer = await this.call(
        () => this.client.multiSearch.perform({ searches }, {}, { abortSignal: signal }),
        signal,
      );
      return readSearchResults(answer, searches.length, ranked);
    } catch (err) {
      if (signal?.aborted) throw cancelled(signal);
      throw backendError(err, 'searching');
    }
  }

  async retire(current: IndexEntry, previous: IndexEntry | null, kept: readonly IndexEntry[] = []): Promise<void> {
    await this.call(() =>
      this.client.aliases().upsert(current.name, { collection_name: collectionName(current) }),
    ).catch((err: unknown) => {
      throw backendError(err, `pointing alias ${current.name} at the new version`);
    });
    const keep = [
      collectionName(current),
      ...(previous ? [collectionName(previous)] : []),
      ...kept.map(collectionName),
    ];
    await this.deleteCollections(current.name, keep);
  }

  async drop(entry: IndexEntry): Promise<void> {
    await this.client
      .aliases(entry.name)
      .delete()
      .catch(() => undefined);
    await this.deleteCollections(entry.name, []);
  }

  private async deleteCollections(index: string, keep: string[]): Promise<void> {
    const all = await this.call(() => this.client.collections().retrieve({ exclude_fields: 'fields' })).catch(
      (err: unknown) => {
        throw backendError(err, 'listing collections');
      },
    );
    for (const name of staleCollections(
      all.map((c) => c.name),
      index,
      keep,
    )) {
      await this.client
        .collections(name)
        .delete()
        .catch(() => undefined);
    }
  }

  forget(name: string): void {
    // Only the load path keeps a DuckDB copy; Typesense itself holds nothing in this process.
    this.engine.release(name);
  }

  async close(): Promise<void> {}
}

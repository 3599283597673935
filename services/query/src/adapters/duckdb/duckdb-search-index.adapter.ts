import type { IndexEntry } from '@quarry/metadata-store';
import type { SnapshotEngine } from '@quarry/snapshots';
import { abortReason } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { SearchIndex, SearchPage, SearchPlan } from '../../ports/search-index.port';
import { UnsupportedQuery } from '../memory/compile-predicate';
import { HeldVersions } from '../memory/held-versions';
import { fieldsOf, leafCount, searchInMemory } from '../memory/in-memory-search';
import { facetsSql, resolvedPlan, searchSql } from './search-sql';

export { ONE_PASS_MAX_RECORDS } from './search-sql';

/**
 * Up to this many records an index is also held in memory and searched by a compiled predicate, no
 * SQL at all: at every size measured up to 300,000 records a scan in JS beat planning and running a
 * statement, but reading a version in and holding it grow with it (`bench/in-memory-search.bench.js`).
 */
export const IN_MEMORY_MAX_RECORDS = 100_000;
/** Memory all held versions may take together (estimated); the least recently searched go first. */
export const IN_MEMORY_BUDGET_BYTES = 512 * 1024 * 1024;
/**
 * A search in memory cannot be interrupted and holds the thread: beyond this many units of work (leaf
 * tests, leaves × records; and the records a word match reads) it goes to SQL, which runs on
 * DuckDB's threads and stops at the deadline.
 */
export const IN_MEMORY_MAX_WORK = 10_000_000;
/**
 * A version let go to make room is not read in again for this long: when the indexes searched need more
 * than the budget, each would otherwise be read in whole on every other search.
 */
export const RELOAD_AFTER_EVICTION_MS = 60_000;

export interface DuckDbSearchOptions {
  /** 0 keeps every search on SQL (the equivalence tests compare both paths). */
  inMemoryMaxRecords?: number;
  /** 0 keeps every search on SQL too. */
  inMemoryBudgetBytes?: number;
  inMemoryMaxWork?: number;
  reloadAfterEvictionMs?: number;
  /** Where versions read into memory and let go are told (an operator sizing QUARRY_MEMORY_INDEX_MB). */
  log?: Logger;
  /**
   * A search waits until its version and columns are held instead of answering through SQL meanwhile:
   * for the conformance suite, so every one of its searches takes the in-memory path.
   */
  awaitMemory?: boolean;
}

/**
 * The embedded default: a small index's search runs on its version held in memory when it can (a scan
 * in JS beats planning a statement), any other as SQL on the snapshot; both give the same page.
 */
export class DuckDbSearchIndex implements SearchIndex {
  /** What is held in memory; its `whenHeld`/`holding` let tests and warm-up wait on it. */
  readonly memory: HeldVersions;
  private readonly maxWork: number;

  constructor(
    private readonly engine: SnapshotEngine,
    private readonly options: DuckDbSearchOptions = {},
  ) {
    this.maxWork = options.inMemoryMaxWork ?? IN_MEMORY_MAX_WORK;
    this.memory = new HeldVersions(engine, {
      maxRecords: options.inMemoryMaxRecords ?? IN_MEMORY_MAX_RECORDS,
      budgetBytes: options.inMemoryBudgetBytes ?? IN_MEMORY_BUDGET_BYTES,
      reloadAfterEvictionMs: options.reloadAfterEvictionMs ?? RELOAD_AFTER_EVICTION_MS,
      log: options.log,
    });
  }

  async prepare(): Promise<void> {
    // The snapshot file is the index: nothing to build.
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    this.memory.dropOlder(entry);
    const small = this.memory.mayHold(entry);
    if (small && this.options.awaitMemory) await this.memory.whenHeld(entry);
    const table = small ? this.memory.table(entry) : null;
    if (table && leafCount(plan.where) * table.size <= this.maxWork) {
      const fields = fieldsOf(plan);
      if (this.options.awaitMemory) await table.readColumns(fields);
      if (table.holds(fields)) {
        if (plan.signal?.aborted) throw abortReason(plan.signal);
        try {
          // The same engine's answer (the conformance suite holds both paths to it): when a version is
          // held in memory depends on timing, and an answer's provenance must not.
          const page = { ...searchInMemory(table, plan, this.maxWork), engine: 'duckdb' };
          // Facets need the stored values (memory holds text lower-cased): SQL counts them.
          if (!plan.facets?.length) return page;
          const { where } = await resolvedPlan(this.engine, entry, { ...plan, score: undefined });
          return { ...page, facets: await facetsSql(this.engine, entry, where, plan.facets, plan.signal) };
        } catch (err) {
          if (!(err instanceof UnsupportedQuery)) throw err;
        }
      } else {
        // Read in the background; this search does not wait for it.
        table.readColumns(fields).catch(() => undefined);
      }
    }
    return { ...(await searchSql(this.engine, entry, plan)), engine: 'duckdb' };
  }

  async retire(): Promise<void> {
    // The engine swaps tables itself when it first sees the newer version.
  }

  async drop(): Promise<void> {}

  forget(name: string): void {
    this.memory.forget(name);
    this.engine.release(name);
  }

  async close(): Promise<void> {
    this.memory.clear();
  }
}

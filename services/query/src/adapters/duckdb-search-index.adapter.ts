import type { IndexEntry } from '@quarry/metadata-store';
import { compileWhere, ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import { abortReason } from '@quarry/errors';
import type { Logger } from '@quarry/logger';
import type { SearchIndex, SearchPage, SearchPlan, SortKey } from '../ports/search-index.port';
import { UnsupportedQuery } from './compile-predicate';
import { fieldsOf, leafCount, searchInMemory } from './in-memory-search';
import { InMemoryTable } from './in-memory-table';

function orderBy(sort: SortKey[]): string {
  const keys = sort.map((s) => {
    const col = s.type === 'string' ? `lower(${ident(s.field)})` : ident(s.field);
    return `${col} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  return [...keys, '__rowid ASC'].join(', ');
}

/**
 * Up to this many records a search is one statement, its count a window over the filtered rows; above
 * it the count and the page are two statements run side by side, so a page of a large index never
 * carries every matching row through a window (bench/README.md, latency).
 */
export const ONE_PASS_MAX_RECORDS = 100_000;

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
 * tests, leaves × records, ~30 ms; and the records a word match reads) it goes to SQL, which runs on
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

interface HeldTable {
  name: string;
  version: number;
  /**
   * Null while it is being read, after it was let go for room (until `evictedAt` is old enough), and for
   * good when it cannot be held (the SQL path answers).
   */
  table: InMemoryTable | null;
  loading: Promise<void>;
  lastUsed: number;
  evictedAt?: number;
}

const mb = (bytes: number) => Math.round(bytes / 104857.6) / 10;

/** The embedded default: searches the in-memory copy of the Parquet snapshot. */
export class DuckDbSearchIndex implements SearchIndex {
  /** Small indexes' published versions held as JS columns, by snapshot file (unique per load). */
  private readonly held = new Map<string, HeldTable>();
  private readonly inMemoryMaxRecords: number;
  private readonly budgetBytes: number;
  private readonly maxWork: number;
  private readonly reloadAfterEvictionMs: number;
  /**
   * Versions are read in one at a time: each is whole before the budget can judge it, so side by side
   * many first searches would hold many versions' records at once, and take both cores.
   */
  private loads: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: SnapshotEngine,
    private readonly options: DuckDbSearchOptions = {},
  ) {
    this.inMemoryMaxRecords = options.inMemoryMaxRecords ?? IN_MEMORY_MAX_RECORDS;
    this.budgetBytes = options.inMemoryBudgetBytes ?? IN_MEMORY_BUDGET_BYTES;
    this.maxWork = options.inMemoryMaxWork ?? IN_MEMORY_MAX_WORK;
    this.reloadAfterEvictionMs = options.reloadAfterEvictionMs ?? RELOAD_AFTER_EVICTION_MS;
  }

  async prepare(): Promise<void> {
    // The snapshot file is the index: nothing to build.
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    this.dropOlder(entry);
    const small = this.mayHold(entry);
    if (small && this.options.awaitMemory) await this.whenHeld(entry);
    const table = small ? this.heldTable(entry) : null;
    if (table && leafCount(plan.where) * table.size <= this.maxWork) {
      const fields = fieldsOf(plan);
      if (this.options.awaitMemory) await table.readColumns(fields);
      if (table.holds(fields)) {
        if (plan.signal?.aborted) throw abortReason(plan.signal);
        try {
          return searchInMemory(table, plan, this.maxWork);
        } catch (err) {
          if (!(err instanceof UnsupportedQuery)) throw err;
        }
      } else {
        // Read in the background; this search does not wait for it.
        table.readColumns(fields).catch(() => undefined);
      }
    }
    return this.searchSql(entry, plan);
  }

  /**
   * The version held in memory, or null while it is read in the background (the first search of a
   * version never waits for it) or when it cannot be held.
   */
  private heldTable(entry: IndexEntry): InMemoryTable | null {
    const known = this.held.get(entry.snapshot);
    const now = Date.now();
    if (known && !(known.evictedAt !== undefined && now - known.evictedAt >= this.reloadAfterEvictionMs)) {
      known.lastUsed = now;
      return known.table;
    }
    // A search still naming an older version (a publish is under way) is not worth holding.
    for (const other of this.held.values()) if (other.name === entry.name && other.version > entry.version) return null;
    const held: HeldTable = {
      name: entry.name,
      version: entry.version,
      table: null,
      loading: Promise.resolve(),
      lastUsed: now,
    };
    const wanted = () => this.held.get(entry.snapshot) === held;
    held.loading = this.loads = this.loads.then(async () => {
      // Forgotten, or a newer version asked for, while it waited its turn.
      if (!wanted()) return;
      const started = Date.now();
      try {
        const table = await InMemoryTable.load(this.engine, entry);
        if (!table || !wanted()) return;
        if (!this.makeRoom(table.approxBytes(), entry.snapshot)) {
          this.options.log?.info(
            { index: entry.name, version: entry.version, mb: mb(table.approxBytes()), budgetMb: mb(this.budgetBytes) },
            'index too large to hold in memory',
          );
          return;
        }
        held.table = table;
        table.onGrow = () => this.keepToBudget(entry.snapshot);
        this.options.log?.info(
          {
            index: entry.name,
            version: entry.version,
            records: table.size,
            mb: mb(table.approxBytes()),
            ms: Date.now() - started,
          },
          'index held in memory',
        );
      } catch (err) {
        // Only a shortcut: whatever keeps it from loading, the SQL path answers.
        this.options.log?.warn(
          { index: entry.name, version: entry.version, err },
          'index could not be read into memory; SQL answers its searches',
        );
      }
    });
    this.held.set(entry.snapshot, held);
    return null;
  }

  /** Older versions of the index go once a newer one is searched, small or not; searches holding them finish. */
  private dropOlder(entry: IndexEntry): void {
    for (const [key, other] of this.held) {
      if (other.name === entry.name && other.version < entry.version) this.held.delete(key);
    }
  }

  /**
   * What the held versions count against the budget: each its expected size once fully read, or what it
   * holds now if that is more (the estimate fell short).
   */
  private usedBytes(): number {
    let used = 0;
    for (const h of this.held.values()) if (h.table) used += Math.max(h.table.approxBytes(), h.table.heldBytes());
    return used;
  }

  /** The versions held now, as `name@version`; for tests and diagnostics. */
  holding(): string[] {
    return [...this.held.values()].filter((h) => h.table).map((h) => `${h.name}@${h.version}`);
  }

  /** Lets the least recently searched version other than `keep` go; false when there is none. */
  private evictOldest(keep: string): boolean {
    let oldest: HeldTable | undefined;
    for (const [key, h] of this.held)
      if (key !== keep && h.table && (!oldest || h.lastUsed < oldest.lastUsed)) oldest = h;
    if (!oldest?.table) return false;
    this.options.log?.info(
      { index: oldest.name, version: oldest.version, mb: mb(oldest.table.heldBytes()), budgetMb: mb(this.budgetBytes) },
      'index let go from memory for room',
    );
    oldest.table = null;
    oldest.evictedAt = Date.now();
    return true;
  }

  /**
   * Lets the least recently searched versions go until `bytes` more fit the budget, counting what each
   * holds now; false (nothing let go) if they never can, as when the version alone is over the budget.
   */
  private makeRoom(bytes: number, keep: string): boolean {
    if (bytes > this.budgetBytes) return false;
    while (this.usedBytes() + bytes > this.budgetBytes) if (!this.evictOldest(keep)) return false;
    return true;
  }

  /**
   * After a held version grew (a column read, a word index or a sort rank built): the others go, least
   * recently searched first, until all fit; if it alone is over the budget it goes too, for good.
   */
  private keepToBudget(snapshot: string): void {
    while (this.usedBytes() > this.budgetBytes) {
      if (this.evictOldest(snapshot)) continue;
      const self = this.held.get(snapshot);
      if (self?.table) {
        this.options.log?.info(
          { index: self.name, version: self.version, mb: mb(self.table.heldBytes()), budgetMb: mb(this.budgetBytes) },
          'index let go from memory: alone over the budget',
        );
        self.table = null;
      }
      return;
    }
  }

  private mayHold(entry: IndexEntry): boolean {
    return this.inMemoryMaxRecords > 0 && this.budgetBytes > 0 && entry.recordCount <= this.inMemoryMaxRecords;
  }

  /** Resolves once the version's records are held (or could not be); for tests and warm-up. */
  async whenHeld(entry: IndexEntry): Promise<void> {
    if (!this.mayHold(entry)) return;
    this.heldTable(entry);
    await this.held.get(entry.snapshot)?.loading;
  }

  /** Resolves once the columns being read for the version are read (none is started); for tests. */
  async whenRead(entry: IndexEntry): Promise<void> {
    await this.held.get(entry.snapshot)?.table?.settled();
  }

  private async searchSql(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    const loaded = await this.engine.table(entry);
    const { table, columnTypes } = loaded;
    const where = compileWhere(plan.where, loaded);
    const from = `FROM ${ident(table)} WHERE ${where.sql}`;
    const projection = recordJsonSql(entry.fields, columnTypes);
    const page = `ORDER BY ${orderBy(plan.sort)} LIMIT ${plan.limit} OFFSET ${plan.offset}`;
    if (entry.recordCount <= ONE_PASS_MAX_RECORDS) {
      // One statement: the count rides along each row of the page as a window over the filtered rows.
      const rows = await this.engine.all(
        `SELECT ${projection} AS j, count(*) OVER () AS __n ${from} ${page}`,
        where.params,
        plan.signal,
      );
      // A page past the end has no row to carry the count: ask for it alone (a rare call).
      if (rows.length > 0 || plan.offset === 0) {
        return {
          total: rows.length ? Number(rows[0].__n) : 0,
          recordsJson: `[${rows.map((r) => String(r.j)).join(',')}]`,
        };
      }
    }
    const [countRows, pageRows] = await Promise.all([
      this.engine.all(`SELECT count(*) AS n ${from}`, where.params, plan.signal),
      this.engine.all(`SELECT ${projection} AS j ${from} ${page}`, where.params, plan.signal),
    ]);
    return { total: Number(countRows[0].n), recordsJson: `[${pageRows.map((r) => String(r.j)).join(',')}]` };
  }

  async retire(): Promise<void> {
    // The engine swaps tables itself when it first sees the newer version.
  }

  async drop(): Promise<void> {}

  forget(name: string): void {
    for (const [key, held] of this.held) if (held.name === name) this.held.delete(key);
    this.engine.release(name);
  }

  async close(): Promise<void> {
    this.held.clear();
  }
}

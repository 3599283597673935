import type { IndexEntry } from '@quarry/metadata-store';
import { compileWhere, ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import { abortReason } from '@quarry/errors';
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
 * A search in memory cannot be interrupted and holds the thread: beyond this many leaf tests (leaves ×
 * records, ~30 ms) it goes to SQL, which runs on DuckDB's threads and stops at the deadline.
 */
export const IN_MEMORY_MAX_WORK = 10_000_000;

export interface DuckDbSearchOptions {
  /** 0 keeps every search on SQL (the equivalence tests compare both paths). */
  inMemoryMaxRecords?: number;
  inMemoryBudgetBytes?: number;
  /**
   * A search waits until its version and columns are held instead of answering through SQL meanwhile:
   * for the conformance suite, so every one of its searches takes the in-memory path.
   */
  awaitMemory?: boolean;
}

interface HeldTable {
  name: string;
  version: number;
  /** Null while it is being read, and for good when it cannot be (the SQL path answers). */
  table: InMemoryTable | null;
  loading: Promise<void>;
  lastUsed: number;
}

/** The embedded default: searches the in-memory copy of the Parquet snapshot. */
export class DuckDbSearchIndex implements SearchIndex {
  /** Small indexes' published versions held as JS columns, by snapshot file (unique per load). */
  private readonly held = new Map<string, HeldTable>();
  private readonly inMemoryMaxRecords: number;
  private readonly budgetBytes: number;

  constructor(
    private readonly engine: SnapshotEngine,
    private readonly options: DuckDbSearchOptions = {},
  ) {
    this.inMemoryMaxRecords = options.inMemoryMaxRecords ?? IN_MEMORY_MAX_RECORDS;
    this.budgetBytes = options.inMemoryBudgetBytes ?? IN_MEMORY_BUDGET_BYTES;
  }

  async prepare(): Promise<void> {
    // The snapshot file is the index: nothing to build.
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    const small = entry.recordCount <= this.inMemoryMaxRecords;
    if (small && this.options.awaitMemory) await this.whenHeld(entry);
    const table = small ? this.heldTable(entry) : null;
    if (table && leafCount(plan.where) * table.size <= IN_MEMORY_MAX_WORK) {
      const fields = fieldsOf(plan);
      if (this.options.awaitMemory) await table.readColumns(fields);
      if (table.holds(fields)) {
        if (plan.signal?.aborted) throw abortReason(plan.signal);
        try {
          return searchInMemory(table, plan);
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
    if (known) {
      known.lastUsed = Date.now();
      return known.table;
    }
    // A search still naming an older version (a publish is under way) is not worth holding.
    for (const other of this.held.values()) if (other.name === entry.name && other.version > entry.version) return null;
    const held: HeldTable = { name: entry.name, version: entry.version, table: null, loading: Promise.resolve(), lastUsed: Date.now() };
    held.loading = InMemoryTable.load(this.engine, entry).then(
      (table) => {
        if (table && this.held.get(entry.snapshot) === held && this.makeRoom(table.approxBytes(), entry.snapshot)) held.table = table;
      },
      // Only a shortcut: whatever keeps it from loading, the SQL path answers.
      () => undefined,
    );
    this.held.set(entry.snapshot, held);
    // Older versions of the index go once a newer one is asked for; searches holding them finish.
    for (const [key, other] of this.held) {
      if (other.name === entry.name && other.version < entry.version) this.held.delete(key);
    }
    return null;
  }

  /** Releases the least recently searched versions until `bytes` more fit the budget; false if they never can. */
  private makeRoom(bytes: number, keep: string): boolean {
    if (bytes > this.budgetBytes) return false;
    const used = () => [...this.held.values()].reduce((n, h) => n + (h.table?.approxBytes() ?? 0), 0);
    while (used() + bytes > this.budgetBytes) {
      const oldest = [...this.held].filter(([key, h]) => key !== keep && h.table).sort(([, a], [, b]) => a.lastUsed - b.lastUsed)[0];
      if (!oldest) return false;
      this.held.delete(oldest[0]);
    }
    return true;
  }

  /** Resolves once the version's records are held (or could not be); for tests and warm-up. */
  async whenHeld(entry: IndexEntry): Promise<void> {
    this.heldTable(entry);
    await this.held.get(entry.snapshot)?.loading;
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
      const rows = await this.engine.all(`SELECT ${projection} AS j, count(*) OVER () AS __n ${from} ${page}`, where.params, plan.signal);
      // A page past the end has no row to carry the count: ask for it alone (a rare call).
      if (rows.length > 0 || plan.offset === 0) {
        return { total: rows.length ? Number(rows[0].__n) : 0, recordsJson: `[${rows.map((r) => String(r.j)).join(',')}]` };
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

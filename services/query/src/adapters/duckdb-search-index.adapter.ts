import type { IndexEntry } from '@quarry/metadata-store';
import { compileWhere, ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import { abortReason } from '@quarry/errors';
import type { SearchIndex, SearchPage, SearchPlan, SortKey } from '../ports/search-index.port';
import { UnsupportedQuery } from './compile-predicate';
import { searchInMemory } from './in-memory-search';
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
 * SQL at all: below it a scan in JS beats planning and running a statement (bench/README.md, latency,
 * `bench/in-memory-search.bench.js`).
 */
export const IN_MEMORY_MAX_RECORDS = 100_000;
/** And only while its records' JSON stays below this (wide records hold more per row). */
export const IN_MEMORY_MAX_BYTES = 128 * 1024 * 1024;

export interface DuckDbSearchOptions {
  /** 0 keeps every search on SQL (the equivalence tests compare both paths). */
  inMemoryMaxRecords?: number;
}

interface HeldTable {
  name: string;
  version: number;
  table: Promise<InMemoryTable | null>;
}

/** The embedded default: searches the in-memory copy of the Parquet snapshot. */
export class DuckDbSearchIndex implements SearchIndex {
  /** Small indexes' published versions held as JS columns, by snapshot file (unique per load). */
  private readonly held = new Map<string, HeldTable>();
  private readonly inMemoryMaxRecords: number;

  constructor(
    private readonly engine: SnapshotEngine,
    options: DuckDbSearchOptions = {},
  ) {
    this.inMemoryMaxRecords = options.inMemoryMaxRecords ?? IN_MEMORY_MAX_RECORDS;
  }

  async prepare(): Promise<void> {
    // The snapshot file is the index: nothing to build.
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    if (entry.recordCount <= this.inMemoryMaxRecords) {
      const table = await this.inMemory(entry);
      if (table) {
        if (plan.signal?.aborted) throw abortReason(plan.signal);
        try {
          return searchInMemory(table, plan);
        } catch (err) {
          if (!(err instanceof UnsupportedQuery)) throw err;
        }
      }
    }
    return this.searchSql(entry, plan);
  }

  private inMemory(entry: IndexEntry): Promise<InMemoryTable | null> {
    const held = this.held.get(entry.snapshot);
    if (held) return held.table;
    const table = InMemoryTable.load(this.engine, entry).then(
      (t) => (t && InMemoryTable.approxBytes(t) <= IN_MEMORY_MAX_BYTES ? t : null),
      // Only a shortcut: whatever keeps it from loading, the SQL path answers.
      () => null,
    );
    this.held.set(entry.snapshot, { name: entry.name, version: entry.version, table });
    // Older versions of the index go once a newer one is asked for; searches holding them finish.
    for (const [key, other] of this.held) {
      if (other.name === entry.name && other.version < entry.version) this.held.delete(key);
    }
    return table;
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

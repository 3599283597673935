import type { IndexEntry } from '@quarry/metadata-store';
import { compileWhere, ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import type { SearchIndex, SearchPage, SearchPlan, SortKey } from '../ports/search-index.port';

function orderBy(sort: SortKey[]): string {
  const keys = sort.map((s) => {
    const col = s.type === 'string' ? `lower(${ident(s.field)})` : ident(s.field);
    return `${col} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  return [...keys, '__rowid ASC'].join(', ');
}

/** The embedded default: searches the in-memory copy of the Parquet snapshot. */
export class DuckDbSearchIndex implements SearchIndex {
  constructor(private readonly engine: SnapshotEngine) {}

  async prepare(): Promise<void> {
    // The snapshot file is the index: nothing to build.
  }

  async search(entry: IndexEntry, plan: SearchPlan): Promise<SearchPage> {
    const loaded = await this.engine.table(entry);
    const { table, columnTypes } = loaded;
    const where = compileWhere(plan.where, loaded);
    const from = `FROM ${ident(table)} WHERE ${where.sql}`;
    const projection = recordJsonSql(entry.fields, columnTypes);
    const [countRows, pageRows] = await Promise.all([
      this.engine.all(`SELECT count(*) AS n ${from}`, where.params, plan.signal),
      this.engine.all(
        `SELECT ${projection} AS j ${from} ORDER BY ${orderBy(plan.sort)} LIMIT ${plan.limit} OFFSET ${plan.offset}`,
        where.params,
        plan.signal,
      ),
    ]);
    return { total: Number(countRows[0].n), recordsJson: `[${pageRows.map((r) => String(r.j)).join(',')}]` };
  }

  async retire(): Promise<void> {
    // The engine swaps tables itself when it first sees the newer version.
  }

  async drop(): Promise<void> {}

  forget(name: string): void {
    this.engine.release(name);
  }

  async close(): Promise<void> {}
}

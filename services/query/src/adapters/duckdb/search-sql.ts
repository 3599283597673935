import type { IndexEntry } from '@quarry/metadata-store';
import { compileWhere, ident, recordJsonSql, type SnapshotEngine } from '@quarry/snapshots';
import type { SearchPage, SearchPlan, SortKey } from '../../ports/search-index.port';

/**
 * Up to this many records a search is one statement, its count a window over the filtered rows; above
 * it the count and the page are two statements run side by side, so a page of a large index never
 * carries every matching row through a window (bench/README.md, latency).
 */
export const ONE_PASS_MAX_RECORDS = 100_000;

export function orderBy(sort: SortKey[]): string {
  const keys = sort.map((s) => {
    const col = s.type === 'string' ? `lower(${ident(s.field)})` : ident(s.field);
    return `${col} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  return [...keys, '__rowid ASC'].join(', ');
}

/** A search as SQL on the snapshot's table: any index, any plan; stops at the plan's deadline. */
export async function searchSql(
  engine: SnapshotEngine,
  entry: IndexEntry,
  plan: SearchPlan,
): Promise<Omit<SearchPage, 'engine'>> {
  const loaded = await engine.table(entry);
  const { table, columnTypes } = loaded;
  const where = compileWhere(plan.where, loaded);
  const from = `FROM ${ident(table)} WHERE ${where.sql}`;
  const projection = recordJsonSql(entry.fields, columnTypes);
  const page = `ORDER BY ${orderBy(plan.sort)} LIMIT ${plan.limit} OFFSET ${plan.offset}`;
  // A count alone (limit 0): no row could carry the window's count.
  if (plan.limit === 0) {
    const [counted] = await engine.all(`SELECT count(*) AS n ${from}`, where.params, plan.signal);
    return { total: Number(counted.n), recordsJson: '[]' };
  }
  if (entry.recordCount <= ONE_PASS_MAX_RECORDS) {
    // One statement: the count rides along each row of the page as a window over the filtered rows.
    const rows = await engine.all(
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
    engine.all(`SELECT count(*) AS n ${from}`, where.params, plan.signal),
    engine.all(`SELECT ${projection} AS j ${from} ${page}`, where.params, plan.signal),
  ]);
  return { total: Number(countRows[0].n), recordsJson: `[${pageRows.map((r) => String(r.j)).join(',')}]` };
}

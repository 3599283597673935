import type { GroupRow } from '../../domain/axis-value';
import { KeyTree } from '../key-tree';
import { keyOf } from '../pivot-rollup';
import type { ClickHousePivotPlan } from './clickhouse-pivot-plan';
import type { ClickHouseRow } from './clickhouse-runner';

/**
 * Each row of the grouping sets statement as a group: GROUPING() says how deep its row and column keys
 * go (always a prefix), as fromGroupingSets reads DuckDB's. Keys are interned, so groups share their key
 * arrays. A filter that matches nothing still has its grand total (counts 0, measures empty).
 */
export function toGroups(plan: ClickHousePivotPlan, rows: ClickHouseRow[]): GroupRow[] {
  const aliases = [...plan.rowAliases, ...plan.colAliases];
  const nRows = plan.rowAliases.length;
  const columns = plan.totalColumns();
  const groupedOut = (gid: number, i: number) => (gid & (1 << (aliases.length - 1 - i))) !== 0;
  const rowTree = new KeyTree();
  const colTree = new KeyTree();
  const groups = rows.map((row): GroupRow => {
    const gid = Number(row.gid);
    let r = 0;
    for (let i = 0; i < nRows && !groupedOut(gid, i); i++) r = rowTree.child(r, keyOf(plan.axes[i], row[aliases[i]]));
    let c = 0;
    for (let i = nRows; i < aliases.length && !groupedOut(gid, i); i++)
      c = colTree.child(c, keyOf(plan.axes[i], row[aliases[i]]));
    return {
      rowKey: rowTree.keys[r],
      columnKey: colTree.keys[c],
      values: plan.totals.map((t, i) => t.value(columns[i].map((alias) => row[alias]))),
    };
  });
  if (!groups.some((g) => g.rowKey.length === 0 && g.columnKey.length === 0))
    groups.push({ rowKey: [], columnKey: [], values: plan.totals.map((t) => t.empty) });
  return groups;
}

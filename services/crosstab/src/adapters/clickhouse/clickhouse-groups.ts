import type { GroupRow } from '../../domain/axis-value';
import { groupsOfGroupingSets } from '../pivot/pivot-rollup';
import type { ClickHousePivotPlan } from './clickhouse-pivot-plan';
import type { ClickHouseRow } from './clickhouse-runner';

/**
 * The grouping sets statement's rows as groups (decoded as the DuckDB adapter's are), each total read
 * from its columns. A filter that matches nothing still has its grand total (counts 0, measures empty),
 * which ClickHouse returns no row for.
 */
export function toGroups(plan: ClickHousePivotPlan, rows: ClickHouseRow[]): GroupRow[] {
  const columns = plan.totalColumns();
  const groups = groupsOfGroupingSets(plan, rows, (row) =>
    plan.totals.map((t, i) => t.value(columns[i].map((alias) => row[alias]))),
  );
  if (!groups.some((g) => g.rowKey.length === 0 && g.columnKey.length === 0))
    groups.push({ rowKey: [], columnKey: [], values: plan.totals.map((t) => t.empty) });
  return groups;
}

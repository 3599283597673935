import type { CalendarGroup } from '@quarry/contract';
import { ident, type DuckDBValue, type LoadedTable } from '@quarry/snapshots';
import type { AxisSpec, CrosstabSpec } from '../domain/crosstab-spec';
import type { PeriodShift } from '../domain/period-shift';
import { axisLabel, localTime, shiftedTime } from './pivot-sql';

/**
 * The shifted records of a period comparison end at the data's last record, so a partial last period is
 * compared with the same elapsed span of the one before (none of its later records).
 */
export function shiftCut(
  spec: CrosstabSpec,
  columnTypes: ReadonlyMap<string, string>,
): Array<{ sql: string; params: Record<string, DuckDBValue> }> {
  const shift = spec.shift;
  if (!shift?.cut) return [];
  const time = shiftedTime(ident(shift.field), columnTypes.get(shift.field), spec.timeZone, shift);
  return [{ sql: `${time} <= CAST($__shift_cut AS TIMESTAMP)`, params: { __shift_cut: shift.cut } }];
}

/**
 * One aggregate over the filtered records: the last record's local time, its period's key, and whether
 * the previous period reaches past the same elapsed span (then the last period is partial and its
 * comparison is cut). Grouped by shifted period, so it is one pass with a handful of groups.
 */
export function lastPeriodSql(
  table: LoadedTable,
  where: string,
  shift: PeriodShift,
  period: CalendarGroup,
  spec: CrosstabSpec,
): string {
  const col = ident(shift.field);
  const type = table.columnTypes.get(shift.field);
  const local = localTime(col, type, spec.timeZone);
  const shifted = shiftedTime(col, type, spec.timeZone, shift);
  const base = [...spec.rows, ...spec.columns].find((a) => a.field.name === shift.field) as AxisSpec;
  const key = axisLabel({ ...base, dateGroup: period }, `date_trunc('${period}', m.last)`);
  return `WITH g AS (SELECT date_trunc('${period}', ${shifted}) AS k, max(${shifted}) AS ms, max(${local}) AS ml
    FROM ${ident(table.table)} WHERE ${where} GROUP BY 1),
  m AS (SELECT max(ml) AS last FROM g)
SELECT strftime(CAST(m.last AS TIMESTAMP), '%Y-%m-%d %H:%M:%S.%f') AS last, ${key} AS key,
  coalesce((SELECT max(ms) FROM g WHERE k = date_trunc('${period}', m.last)) > m.last, false) AS partial
FROM m`;
}

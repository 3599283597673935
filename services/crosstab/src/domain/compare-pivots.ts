import { AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { PivotEngine, PivotRestriction } from '../ports/pivot-engine.port';
import type { GroupRow } from './axis-value';
import { MAX_CELLS, type CrosstabSpec } from './crosstab-spec';
import { applyComparison, comparedTotals, markPartial, shiftedSpec, shiftOf } from './period-compare';

/**
 * The table's groups with their compared totals, from a pivot of the shifted records with the same kept
 * keys; as for the table itself, a row's total across every column, a column's down every row and the
 * grand total come from passes that leave the other axis unrestricted. Returns the spec as tables draw
 * it (the partial last period marked).
 */
export async function compareGroups(
  pivots: PivotEngine,
  entry: IndexEntry,
  where: QueryNode,
  spec: CrosstabSpec,
  drawn: { groups: GroupRow[]; restrict: PivotRestriction },
  signal?: AbortSignal,
): Promise<{ spec: CrosstabSpec; groups: GroupRow[] }> {
  const at = comparedTotals(spec);
  if (at.length === 0 || drawn.groups.length === 0) return { spec, groups: drawn.groups };
  const compare = spec.totals[at[0]].compare;
  const axis = [...spec.rows, ...spec.columns].find((a) => a.dateGroup === compare?.period);
  if (!compare || !axis) return { spec, groups: drawn.groups };
  const name = `totals[${at[0]}].compare`;
  if (!pivots.lastPeriod) throw AppError.invalid(`${name}: this deployment's pivot engine cannot compare periods`);
  // Every compared total shares the period; each may look back a period or a year.
  const byShift = new Map<string, number[]>();
  for (const m of at) {
    const shift = shiftOf(axis.field.name, spec.totals[m].compare ?? compare);
    const k = `${shift.unit}:${shift.n}`;
    byShift.set(k, [...(byShift.get(k) ?? []), m]);
  }
  let groups = drawn.groups;
  let drawnSpec = spec;
  for (const totals of byShift.values()) {
    const only: CrosstabSpec = {
      ...spec,
      totals: spec.totals.map((t, i) => (totals.includes(i) ? t : { ...t, compare: undefined })),
    };
    const shift = shiftOf(axis.field.name, spec.totals[totals[0]].compare ?? compare);
    const last = await pivots.lastPeriod(entry, where, shift, compare.period, spec, signal);
    const shiftedGroups = last
      ? await shiftedPivot(
          pivots,
          entry,
          where,
          shiftedSpec(only, { ...shift, cut: last.last, safe: last.safe }),
          drawn.restrict,
          signal,
        )
      : [];
    groups = applyComparison(only, groups, shiftedGroups);
    if (last) drawnSpec = markPartial(drawnSpec, axis.field.name, last);
  }
  return { spec: drawnSpec, groups };
}

/** As many outer keys as the table's own choice of them reads (run-crosstab's OUTER_KEYS_FACTOR). */
const OUTER_CELLS = MAX_CELLS * 10;

async function shiftedPivot(
  pivots: PivotEngine,
  entry: IndexEntry,
  where: QueryNode,
  spec: CrosstabSpec,
  restrict: PivotRestriction,
  signal?: AbortSignal,
): Promise<GroupRow[]> {
  const main = await pivots.pivot(entry, where, spec, MAX_CELLS, signal, restrict);
  let groups = main.groups;
  const isRowTotal = (g: GroupRow) => g.rowKey.length > 0 && g.columnKey.length === 0;
  const isColumnTotal = (g: GroupRow) => g.rowKey.length === 0 && g.columnKey.length > 0;
  const isGrand = (g: GroupRow) => g.rowKey.length === 0 && g.columnKey.length === 0;
  if (restrict.columns && spec.rows.length) {
    const across = await pivots.pivot(entry, where, { ...spec, columns: [] }, MAX_CELLS, signal, {
      rows: restrict.rows,
    });
    groups = [...groups.filter((g) => !isRowTotal(g)), ...across.groups.filter(isRowTotal)];
  }
  if (restrict.rows && spec.columns.length) {
    const down = await pivots.pivot(entry, where, { ...spec, rows: [] }, MAX_CELLS, signal, {
      columns: restrict.columns,
    });
    groups = [...groups.filter((g) => !isColumnTotal(g)), ...down.groups.filter(isColumnTotal)];
  }
  if (restrict.rows || restrict.columns) {
    // The grand total over every record, from the outermost level alone (as the table's own comes).
    const outer = spec.rows.length
      ? { rows: spec.rows.slice(0, 1), columns: [] }
      : { rows: [], columns: spec.columns.slice(0, 1) };
    const all = await pivots.pivot(entry, where, { ...spec, ...outer, subtotals: false }, OUTER_CELLS, signal);
    groups = [...groups.filter((g) => !isGrand(g)), ...all.groups.filter(isGrand)];
  }
  return groups;
}

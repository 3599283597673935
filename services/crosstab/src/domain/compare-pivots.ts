import { AppError } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { PivotEngine, PivotRestriction, PivotTwin } from '../ports/pivot-engine.port';
import type { GroupRow } from './axis-value';
import { MAX_CELLS, type AxisSpec, type CrosstabSpec } from './crosstab-spec';
import { mergePasses } from './pass-twins';
import { applyComparison, comparedTotals, keysMoveWhole, markPartial, shiftedSpec, shiftOf } from './period-compare';
import type { LastPeriod, PeriodShift } from './period-shift';

/** A comparison's shifts, each with the data's last period, known before the table's passes run. */
export interface PreparedCompare {
  field: string;
  shifts: Array<{ totals: number[]; shift: PeriodShift; last: LastPeriod | null }>;
  /**
   * With one shift whose period keys move whole: the compared period's records as a twin of the table's
   * passes, read in their scans (the engine may decline; then the shifted passes run apart).
   */
  twin?: PivotTwin & { of: 'shifted' };
}

/** The shifts of a crosstab's compared totals and their last periods (undefined without a comparison). */
export async function prepareCompare(
  pivots: PivotEngine,
  entry: IndexEntry,
  where: QueryNode,
  spec: CrosstabSpec,
  signal?: AbortSignal,
): Promise<PreparedCompare | undefined> {
  const at = comparedTotals(spec);
  if (at.length === 0) return undefined;
  const compare = spec.totals[at[0]].compare;
  const axis = [...spec.rows, ...spec.columns].find((a) => a.dateGroup === compare?.period);
  if (!compare || !axis) return undefined;
  if (!pivots.lastPeriod)
    throw AppError.invalid(`totals[${at[0]}].compare: this deployment's pivot engine cannot compare periods`);
  // Every compared total shares the period; each may look back a period or a year.
  const byShift = new Map<string, number[]>();
  for (const m of at) {
    const shift = shiftOf(axis.field.name, spec.totals[m].compare ?? compare);
    const k = `${shift.unit}:${shift.n}`;
    byShift.set(k, [...(byShift.get(k) ?? []), m]);
  }
  const shifts: PreparedCompare['shifts'] = [];
  for (const totals of byShift.values()) {
    const shift = shiftOf(axis.field.name, spec.totals[totals[0]].compare ?? compare);
    const last = await pivots.lastPeriod(entry, where, shift, compare.period, spec, signal);
    shifts.push({ totals, shift: last ? { ...shift, cut: last.last, safe: last.safe } : shift, last });
  }
  const onField = [...spec.rows, ...spec.columns].filter((a) => a.field.name === axis.field.name);
  const one = shifts.length === 1 && shifts[0].last ? shifts[0] : undefined;
  const whole =
    one !== undefined &&
    keysMoveWhole(one.shift, spec.timeZone) &&
    onField.every((a: AxisSpec) => a.dateGroup === compare.period);
  const twin =
    one && whole ? { of: 'shifted' as const, shift: { ...one.shift, onKeys: true }, totals: one.totals } : undefined;
  return { field: axis.field.name, shifts, ...(twin ? { twin } : {}) };
}

/**
 * The table's groups with their compared totals, from a pivot of the shifted records with the same kept
 * keys; as for the table itself, a row's total across every column, a column's down every row and the
 * grand total come from passes that leave the other axis unrestricted. `drawn.shifted` holds the shifted
 * groups when the table's passes read them as their twin. Returns the spec as tables draw it (the
 * partial last period marked).
 */
export async function compareGroups(
  pivots: PivotEngine,
  entry: IndexEntry,
  where: QueryNode,
  spec: CrosstabSpec,
  prepared: PreparedCompare | undefined,
  drawn: {
    groups: GroupRow[];
    restrict: PivotRestriction;
    shifted?: GroupRow[];
    /** The Other row's and column's groups over each shift's records (by shift), when the table has them. */
    shiftedOther?: (shiftedSpec: CrosstabSpec) => Promise<GroupRow[]>;
  },
  signal?: AbortSignal,
): Promise<{ spec: CrosstabSpec; groups: GroupRow[] }> {
  if (!prepared || drawn.groups.length === 0) return { spec, groups: drawn.groups };
  let groups = drawn.groups;
  let drawnSpec = spec;
  for (const { totals, shift, last } of prepared.shifts) {
    const only: CrosstabSpec = {
      ...spec,
      totals: spec.totals.map((t, i) => (totals.includes(i) ? t : { ...t, compare: undefined })),
    };
    // The twin's groups carry every total of the table: the compared ones as the shifted pivot orders them.
    const read = prepared.twin && drawn.shifted;
    const shiftedGroups = read
      ? read.map((g) => ({ ...g, values: totals.map((m) => g.values[m]) }))
      : last
        ? await shiftedPivot(pivots, entry, where, shiftedSpec(only, shift), drawn.restrict, signal)
        : [];
    const other = last && drawn.shiftedOther ? await drawn.shiftedOther(shiftedSpec(only, shift)) : [];
    groups = applyComparison(only, groups, [...shiftedGroups, ...other]);
    if (last) drawnSpec = markPartial(drawnSpec, prepared.field, last);
  }
  return { spec: drawnSpec, groups };
}

async function shiftedPivot(
  pivots: PivotEngine,
  entry: IndexEntry,
  where: QueryNode,
  spec: CrosstabSpec,
  restrict: PivotRestriction,
  signal?: AbortSignal,
): Promise<GroupRow[]> {
  const main = await pivots.pivot(entry, where, spec, MAX_CELLS, signal, restrict);
  const across =
    restrict.columns && spec.rows.length
      ? await pivots.pivot(entry, where, { ...spec, columns: [] }, MAX_CELLS, signal, { rows: restrict.rows })
      : undefined;
  const down =
    restrict.rows && spec.columns.length
      ? await pivots.pivot(entry, where, { ...spec, rows: [] }, MAX_CELLS, signal, { columns: restrict.columns })
      : undefined;
  // The grand total over every record: one group, no key (a median's keys cost as much as its records).
  const all =
    restrict.rows || restrict.columns
      ? await pivots.pivot(entry, where, { ...spec, rows: [], columns: [], subtotals: false }, MAX_CELLS, signal)
      : undefined;
  return mergePasses(main.groups, { across: across?.groups, down: down?.groups, all: all?.groups });
}

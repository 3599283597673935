import { compareLabel, comparePeriod, type CalendarGroup, type CompletePivot } from '@quarry/contract';
import type { AxisValue, GroupRow } from './axis-value';
import type { AxisSpec, CrosstabSpec, TotalSpec } from './crosstab-spec';
import type { CompareSpec, ComparePartial, LastPeriod, PeriodShift } from './period-shift';

/*
 * Period comparison: a compared total's value is the same measure over the records of the shifted period,
 * read from a second pivot whose date keys are computed from each record's time moved one period (or one
 * year) later, so the previous period's records land on the current period's key. Never a neighbouring
 * cell: it holds under limits, filters and gaps, and for holistic aggregations.
 */

const SHIFTS: Record<CalendarGroup, Pick<PeriodShift, 'unit' | 'n'>> = {
  hour: { unit: 'hour', n: 1 },
  day: { unit: 'day', n: 1 },
  week: { unit: 'day', n: 7 },
  month: { unit: 'month', n: 1 },
  quarter: { unit: 'month', n: 3 },
  year: { unit: 'month', n: 12 },
};

/**
 * Whether the keys of a period move whole under a shift (a key plus the shift is the key its records
 * land on): not for hours in a zone whose offset changes, where the hour after 01:00 on a spring-forward
 * night is 03:00 and the repeated hour of a fall-back night splits in two.
 */
export const keysMoveWhole = (shift: Pick<PeriodShift, 'unit'>, timeZone: string) =>
  shift.unit !== 'hour' || timeZone === 'UTC';

/** The shift of a comparison: one period, or a year (a week's year is 52 weeks, so weekdays line up). */
export function shiftOf(field: string, c: CompareSpec): PeriodShift {
  if (c.to === 'previousPeriod') return { field, ...SHIFTS[c.period] };
  return c.period === 'week' ? { field, unit: 'day', n: 364 } : { field, unit: 'month', n: 12 };
}

/**
 * Each compared total's comparison, and its header when it has no name of its own; the contract checked
 * that one date field has calendar axes.
 */
export function withCompare(input: CompletePivot, totals: TotalSpec[], axes: readonly AxisSpec[]): string | undefined {
  if (!input.totals.some((t) => t.compare)) return undefined;
  const found = comparePeriod(axes.map((a) => ({ field: a.field.name, dateGroup: a.dateGroup })));
  if ('problem' in found) return undefined;
  input.totals.forEach((t, i) => {
    if (!t.compare) return;
    totals[i].compare = { ...t.compare, period: found.period };
    if (!t.name) totals[i].name = compareLabel(totals[i].name, t.compare, found.period);
  });
  return found.field;
}

/** The compared totals, by index. */
export const comparedTotals = (spec: CrosstabSpec): number[] => spec.totals.flatMap((t, i) => (t.compare ? [i] : []));

/**
 * The pivot of the shifted records: the compared totals' own aggregations, every key at every level the
 * table shows, nothing ranked or filtered (the kept keys are the table's).
 */
export function shiftedSpec(spec: CrosstabSpec, shift: PeriodShift): CrosstabSpec {
  const period = spec.totals.find((t) => t.compare)?.compare?.period;
  const onField = [...spec.rows, ...spec.columns].filter((a) => a.field.name === shift.field);
  const totals = comparedTotals(spec).map((i): TotalSpec => {
    const { compare: _compare, look: _look, ...own } = spec.totals[i];
    return { ...own, showAs: 'value' };
  });
  const byLabel = { by: 'label', measure: 0, direction: 'asc' } as const;
  return {
    ...spec,
    totals,
    formulaOrder: [],
    rowFilter: null,
    columnFilter: null,
    rowOrder: byLabel,
    columnOrder: byLabel,
    rowLimit: null,
    columnLimit: null,
    shift: { ...shift, onKeys: keysMoveWhole(shift, spec.timeZone) && onField.every((a) => a.dateGroup === period) },
  };
}

// An Other row's (column's) groups have the keys of the totals beside them (the axis left out): only the
// shifted period's own Other groups may answer them, never a column's or the grand total.
const keyOf = (g: Pick<GroupRow, 'rowKey' | 'columnKey' | 'rowOther' | 'columnOther'>) =>
  JSON.stringify([
    g.rowKey.map((v) => (v === '' ? null : v)),
    g.columnKey.map((v) => (v === '' ? null : v)),
    g.rowOther === true,
    g.columnOther === true,
  ]);

const counts = (t: TotalSpec) => t.aggregation === 'Count' || t.aggregation === 'CountDistinct';

/**
 * A group's compared value from its current one and the shifted period's. A period without records
 * counts none and has no other measure, on either side: a cell with no records of its own compared with
 * one record counts 0 against 1 (difference −1, percentDifference −100), and a percentage of nothing
 * counted before is empty (no base).
 */
function compared(t: TotalSpec, current: number | null, previous: number | null): number | null {
  const before = previous ?? (counts(t) ? 0 : null);
  const now = current ?? (counts(t) ? 0 : null);
  switch (t.compare?.as) {
    case 'value':
      return before;
    case 'difference':
      return now === null || before === null ? null : now - before;
    case 'percentDifference':
      return now === null || before === null || before === 0 ? null : ((now - before) / Math.abs(before)) * 100;
    default:
      return current;
  }
}

const rowPart = (g: Pick<GroupRow, 'rowKey' | 'rowOther'>) => JSON.stringify([g.rowKey, g.rowOther === true]);
const columnPart = (g: Pick<GroupRow, 'columnKey' | 'columnOther'>) =>
  JSON.stringify([g.columnKey, g.columnOther === true]);

/**
 * The table's groups with each compared total's value replaced by its comparison with the shifted
 * pivot's group of the same keys. A shifted group whose row and column are both in the table but whose
 * cell has no records of its own is a cell of the table too (the comparison does not depend on the
 * current period having records; its other totals are empty); one whose row or column is not in the
 * table (the period after the data's last, a key left out by a limit) is not shown.
 */
export function applyComparison(spec: CrosstabSpec, groups: GroupRow[], shifted: GroupRow[]): GroupRow[] {
  const at = comparedTotals(spec);
  const previous = new Map(shifted.map((g) => [keyOf(g), g.values]));
  const withValues = (g: GroupRow, before: Array<number | null> | undefined): GroupRow => {
    const values = [...g.values];
    at.forEach((m, j) => {
      values[m] = compared(spec.totals[m], g.values[m], before?.[j] ?? null);
    });
    return { ...g, values };
  };
  const out = groups.map((g) => withValues(g, previous.get(keyOf(g))));
  const rows = new Set(groups.map(rowPart));
  const columns = new Set(groups.map(columnPart));
  const present = new Set(groups.map(keyOf));
  for (const s of shifted) {
    if (present.has(keyOf(s)) || !rows.has(rowPart(s)) || !columns.has(columnPart(s))) continue;
    const empty: GroupRow = { ...s, values: spec.totals.map(() => null) };
    present.add(keyOf(s));
    out.push(withValues(empty, s.values));
  }
  return out;
}

/** The spec as tables draw it once the last period is known: the axis of that period marks its key. */
export function markPartial(spec: CrosstabSpec, field: string, last: LastPeriod): CrosstabSpec {
  const period = spec.totals.find((t) => t.compare)?.compare?.period;
  if (!last.partial || !period) return spec;
  const isPeriod = (a: AxisSpec) => a.field.name === field && a.dateGroup === period;
  const on = spec.rows.some(isPeriod) ? 'rows' : 'columns';
  const mark = (a: AxisSpec): AxisSpec => (isPeriod(a) ? { ...a, partialKey: last.key } : a);
  return {
    ...spec,
    rows: spec.rows.map(mark),
    columns: spec.columns.map(mark),
    comparePartial: { on, field, key: last.key, lastRecord: last.last },
  };
}

/** Whether a key (row or column) holds the partial last period. */
export function isPartialKey(axes: readonly AxisSpec[], key: readonly AxisValue[]): boolean {
  return axes.some((a, i) => a.partialKey !== undefined && i < key.length && key[i] === a.partialKey);
}

/** A header of the partial last period carries a mark, explained in the table's caption. */
export const PARTIAL_MARK = ' *';

export function partialNote(p: ComparePartial): string {
  // To the minute, as a person reads it (JSON keeps every digit).
  return `* ${p.key} is partial (data to ${p.lastRecord.slice(0, 16)}): compared with the same elapsed span`;
}

import type { Row } from '@quarry/snapshots';
import type { GroupRow } from '../../domain/axis-value';

/*
 * A folded pass (PivotRestriction.fold): every record is read, and those whose outermost row (column)
 * key is not kept are folded into one Other row (column). Each record carries a flag "not kept" per
 * folded axis, its keys on that axis are null when the flag is set, and each grouping set that groups
 * by that axis groups by the flag too: a kept blank key (flag false) and the Other records (flag true)
 * stay apart. One scan then gives the kept cells, the totals over every record and the Other cells,
 * where the kept keys' pass, the passes down every row and across every column, and the Other passes
 * each read the records again. Every total of an Other group is its records' own (a median, a distinct
 * count), as in any group.
 */

/** The axes a plan folds: SQL true for a record whose outermost key on that axis is not kept. */
export interface PlanFold {
  rows?: string;
  columns?: string;
  /** The filter with the kept keys' tests, over which the keys are counted (an answer past the limit). */
  keptWhere: string;
}

export const FOLD_ROWS = '__or';
export const FOLD_COLUMNS = '__oc';

/** The flags of a fold as grouped columns, computed once per record beside its columns. */
export function foldFlags(fold: PlanFold): string[] {
  return [
    ...(fold.rows ? [`${fold.rows} AS ${FOLD_ROWS}`] : []),
    ...(fold.columns ? [`${fold.columns} AS ${FOLD_COLUMNS}`] : []),
  ];
}

/** The flag columns a fold adds to the grouped rows. */
export function foldColumns(fold: PlanFold | undefined): string[] {
  if (!fold) return [];
  return [...(fold.rows ? [FOLD_ROWS] : []), ...(fold.columns ? [FOLD_COLUMNS] : [])];
}

/** A key of a folded axis: null for the Other records, which the flag tells apart from a kept blank key. */
export function foldedKey(fold: PlanFold | undefined, row: boolean, sql: string): string {
  const flag = row ? fold?.rows && FOLD_ROWS : fold?.columns && FOLD_COLUMNS;
  return flag ? `CASE WHEN ${flag} THEN NULL ELSE ${sql} END` : sql;
}

/** The flags a level's grouping set groups by: an axis's flag wherever the set has that axis's keys. */
export function foldedSet(fold: PlanFold | undefined, rowDepth: number, columnDepth: number): string[] {
  if (!fold) return [];
  return [
    ...(fold.rows && rowDepth > 0 ? [FOLD_ROWS] : []),
    ...(fold.columns && columnDepth > 0 ? [FOLD_COLUMNS] : []),
  ];
}

/**
 * The groups of a folded pass, `groups[i]` read from `rows[i]`: the Other row's groups are those at
 * the full row depth (a shallower level of Other records holds the same records: its inner keys are
 * null), keyed [] and marked rowOther; the Other column's likewise at the full column depth.
 */
export function foldedGroups(rows: Row[], groups: GroupRow[], depth: { rows: number; columns: number }): GroupRow[] {
  const out: GroupRow[] = [];
  groups.forEach((g, i) => {
    const rowOther = rows[i][FOLD_ROWS] === true;
    const columnOther = rows[i][FOLD_COLUMNS] === true;
    if (!rowOther && !columnOther) {
      out.push(g);
      return;
    }
    if (rowOther && g.rowKey.length !== depth.rows) return;
    if (columnOther && g.columnKey.length !== depth.columns) return;
    out.push({
      rowKey: rowOther ? [] : g.rowKey,
      columnKey: columnOther ? [] : g.columnKey,
      values: g.values,
      ...(rowOther ? { rowOther: true as const } : {}),
      ...(columnOther ? { columnOther: true as const } : {}),
    });
  });
  return out;
}

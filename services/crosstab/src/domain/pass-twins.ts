import type { PivotResult, PivotRestriction, PivotTwin } from '../ports/pivot-engine.port';
import type { GroupRow } from './axis-value';

/*
 * A crosstab's passes and the twins read beside them (a compared period's groups, an Other row's): what
 * each pass asks for, what it gave back, and how the passes of a limited table are put together.
 */

/** The restriction with these twins asked for (the undefined ones left out). */
export function withTwins(restrict: PivotRestriction, ...twins: Array<PivotTwin | undefined>): PivotRestriction {
  const asked = twins.filter((t): t is PivotTwin => t !== undefined);
  return asked.length ? { ...restrict, twins: asked } : restrict;
}

/** A twin's groups as the pass read them; undefined when it was not asked or the engine left it out. */
export function twinOf(
  result: PivotResult,
  restrict: PivotRestriction,
  twin: PivotTwin | undefined,
): GroupRow[] | undefined {
  if (!twin) return undefined;
  const at = restrict.twins?.indexOf(twin) ?? -1;
  return at >= 0 && result.twins?.length === restrict.twins?.length ? result.twins?.[at] : undefined;
}

const isRowTotal = (g: GroupRow) => g.rowKey.length > 0 && g.columnKey.length === 0;
const isColumnTotal = (g: GroupRow) => g.rowKey.length === 0 && g.columnKey.length > 0;
export const isGrand = (g: GroupRow) => g.rowKey.length === 0 && g.columnKey.length === 0;

/**
 * A limited table's groups: the restricted pass's cells, each row's total from the pass across every
 * column, each column's total from the pass down every row, and the grand total from a pass over every
 * record (each part only when that pass ran).
 */
export function mergePasses(
  main: GroupRow[],
  parts: { across?: GroupRow[]; down?: GroupRow[]; all?: GroupRow[] },
): GroupRow[] {
  let groups = main;
  if (parts.across) groups = [...groups.filter((g) => !isRowTotal(g)), ...parts.across.filter(isRowTotal)];
  if (parts.down) groups = [...groups.filter((g) => !isColumnTotal(g)), ...parts.down.filter(isColumnTotal)];
  if (parts.all) groups = [...groups.filter((g) => !isGrand(g)), ...parts.all.filter(isGrand)];
  return groups;
}

import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { OuterExclusion, PivotEngine, PivotRestriction } from '../ports/pivot-engine.port';
import type { AxisValue, GroupRow } from './axis-value';
import { MAX_CELLS, type CrosstabSpec } from './crosstab-spec';
import { isGrand } from './pass-twins';
import type { OuterCounts } from './pivot-table';

/** The outer values rowLimit / columnLimit and the filters keep, their counts, and the grand total. */
export interface ChosenOuter {
  values: AxisValue[];
  counts: OuterCounts;
  grand: GroupRow | undefined;
  /** The grand total of the compared period, when the pass read it as a twin. */
  shiftedGrand?: GroupRow[];
}

/** The records of the Other row (column): none of the kept outer keys, when some were left out. */
export function otherExclusion(spec: CrosstabSpec, axis: 'rows' | 'columns', c: ChosenOuter | undefined) {
  const wanted = axis === 'rows' ? spec.otherRow : spec.otherColumn;
  if (!wanted || !c || c.counts.omitted + c.counts.filteredOut === 0) return undefined;
  return { of: 'excluded' as const, exclusion: { axis: spec[axis][0], values: c.values } };
}

/**
 * The Other row's and column's groups (otherRow, otherColumn), each read from the records whose
 * outermost key is none of those kept, with that axis left out of the pivot: every total (a distinct
 * count, a median) is exact over those records, never a sum of cells. The Other row's cells are
 * restricted to the kept columns as every row's are; its total, like every row total, is not. The
 * cells come from the pass down every row (across every column) when it read them as its twin.
 */
export async function otherGroups(
  pivots: PivotEngine,
  call: { entry: IndexEntry; where: QueryNode; spec: CrosstabSpec; signal?: AbortSignal },
  rows: ChosenOuter | undefined,
  columns: ChosenOuter | undefined,
  read: { rowCells?: GroupRow[]; columnCells?: GroupRow[] } = {},
): Promise<GroupRow[]> {
  const { entry, where, spec, signal } = call;
  const notRows: OuterExclusion | undefined = otherExclusion(spec, 'rows', rows)?.exclusion;
  const notColumns: OuterExclusion | undefined = otherExclusion(spec, 'columns', columns)?.exclusion;
  if (!notRows && !notColumns) return [];
  const noRows = { rows: [], rowLimit: null, rowFilter: null };
  const noColumns = { columns: [], columnLimit: null, columnFilter: null };
  const pass = async (over: Partial<CrosstabSpec>, restrict: PivotRestriction, mark: Partial<GroupRow>) => {
    const found = await pivots.pivot(entry, where, { ...spec, ...over }, MAX_CELLS, signal, restrict);
    return found.groups.map((g) => ({ ...g, ...mark }));
  };
  const out: GroupRow[] = [];
  if (notRows) {
    // The Other row across the kept columns, then its total across every column.
    const mark = { rowOther: true as const };
    const cells = read.rowCells
      ? read.rowCells.map((g) => ({ ...g, ...mark }))
      : await pass(noRows, { columns: columns?.values, notRows }, mark);
    out.push(...(columns ? cells.filter((g) => !isGrand(g)) : cells));
    if (columns) out.push(...(await pass({ ...noRows, ...noColumns }, { notRows }, mark)));
  }
  if (notColumns) {
    const mark = { columnOther: true as const };
    const cells = read.columnCells
      ? read.columnCells.map((g) => ({ ...g, ...mark }))
      : await pass(noColumns, { rows: rows?.values, notColumns }, mark);
    out.push(...(rows ? cells.filter((g) => !isGrand(g)) : cells));
    if (rows) out.push(...(await pass({ ...noRows, ...noColumns }, { notColumns }, mark)));
  }
  if (notRows && notColumns)
    out.push(
      ...(await pass({ ...noRows, ...noColumns }, { notRows, notColumns }, { rowOther: true, columnOther: true })),
    );
  return out;
}

/**
 * A folded pass's groups (PivotRestriction.fold) as the table wants them: the Other row's groups only
 * with otherRow (and values left out), the Other column's only with otherColumn; their corner only
 * with both. A folded axis without its Other still has every record in its totals.
 */
export function wantedOthers(groups: GroupRow[], wanted: { rows: boolean; columns: boolean }): GroupRow[] {
  if (wanted.rows && wanted.columns) return groups;
  return groups.filter((g) => (wanted.rows || !g.rowOther) && (wanted.columns || !g.columnOther));
}

import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { PivotEngine, PivotRestriction, PivotResult } from '../ports/pivot-engine.port';
import type { CrosstabSpec } from './crosstab-spec';
import type { GroupRow } from './axis-value';

/**
 * The path `verify: true` recomputes a crosstab along: the same engine asked only for plain passes over
 * the records. No rollup (the entry it sees names none, so none can match), no twin read in the same
 * scan, no folded Other pass: each of those becomes the separate pass the use case makes when an engine
 * declines them. Where the module has one, `base` is a second engine built to roll totals up another way
 * (DuckDB's grouping sets instead of the JS roll-up).
 */
export function independentPivots(base: PivotEngine): PivotEngine {
  const plain = (entry: IndexEntry): IndexEntry => {
    const { rollups: _rollups, ...rest } = entry;
    return rest;
  };
  return {
    engineName: base.engineName,
    pivot(
      entry: IndexEntry,
      where: QueryNode,
      spec: CrosstabSpec,
      maxCells: number,
      signal?: AbortSignal,
      restrict: PivotRestriction = {},
    ): Promise<PivotResult> {
      const { twins: _twins, fold: _fold, ...passes } = restrict;
      return base.pivot(plain(entry), where, spec, maxCells, signal, passes);
    },
    keysAtLeast: (entry, where, spec, signal, opts) => base.keysAtLeast(plain(entry), where, spec, signal, opts),
    fieldRange: (entry, where, field, signal) => base.fieldRange(plain(entry), where, field, signal),
    ...(base.lastPeriod
      ? {
          lastPeriod: base.lastPeriod.bind(base),
        }
      : {}),
    forget: (name) => base.forget(name),
  };
}

/** Two computations of a number agree when they differ by float noise at most (sums added in another order). */
const RELATIVE = 1e-9;

function agree(a: number | null, b: number | null): boolean {
  if (a === null || b === null) return a === b;
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  return a === b || Math.abs(a - b) <= RELATIVE * Math.max(Math.abs(a), Math.abs(b));
}

const groupKey = (g: GroupRow) => JSON.stringify([g.rowKey, g.columnKey, g.rowOther === true, g.columnOther === true]);

/** A cell that differed: where, which total, and both values (logged for whoever looks into it). */
export interface Mismatch {
  rowKey: GroupRow['rowKey'];
  columnKey: GroupRow['columnKey'];
  total: number;
  answered: number | null;
  recomputed: number | null;
}

/**
 * Every value of every returned group against the recomputed groups: a value the recomputation lacks
 * (its group is missing) is a mismatch, and so is a group it found that the answer lacks, counted once per
 * value. `cells` counts the answer's values.
 */
export function compareCells(
  answered: readonly GroupRow[],
  recomputed: readonly GroupRow[],
): { cells: number; mismatched: number; first: Mismatch[] } {
  const again = new Map(recomputed.map((g) => [groupKey(g), g]));
  let cells = 0;
  let mismatched = 0;
  const first: Mismatch[] = [];
  const note = (g: GroupRow, total: number, a: number | null, r: number | null) => {
    mismatched++;
    if (first.length < 5) first.push({ rowKey: g.rowKey, columnKey: g.columnKey, total, answered: a, recomputed: r });
  };
  for (const g of answered) {
    const key = groupKey(g);
    const r = again.get(key);
    again.delete(key);
    g.values.forEach((v, i) => {
      cells++;
      const w = r ? (r.values[i] ?? null) : null;
      if (!r || !agree(v, w)) note(g, i, v, r ? w : null);
    });
  }
  for (const g of again.values()) g.values.forEach((v, i) => note(g, i, null, v));
  return { cells, mismatched, first };
}

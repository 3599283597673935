import type { IndexEntry } from '@quarry/metadata-store';
import type { QueryNode } from '@quarry/query-language';
import type { AxisValue, GroupRow } from '../domain/axis-value';
import type { AxisSpec, CrosstabSpec } from '../domain/crosstab-spec';
import type { CalendarGroup } from '@quarry/contract';
import type { LastPeriod, PeriodShift } from '../domain/period-shift';

/** How many row and column keys the pivot has (columns is 1 without column fields: the Total column). */
export interface PivotKeys {
  rows: number;
  columns: number;
}

export interface PivotResult {
  keys: PivotKeys;
  /** Every cell and total; empty when the pivot is over the cell limit. */
  groups: GroupRow[];
  /** Set (with no group) when the subtotals and totals alone would be more groups than a table within the limit can show. */
  tooManyGroups?: true;
  /** What drill-through queries need to know of the stored columns (see DrillFacts). */
  drill?: DrillFacts;
  /** The rollup the pivot was answered from; absent when it scanned the records. */
  servedBy?: string;
  /**
   * Set when the engine read the pass folded (`restrict.fold`): `groups` then also hold every total over
   * all the records and the Other groups, and there are no twins.
   */
  folded?: true;
  /**
   * The groups of each twin asked for in `restrict.twins`, in the same order, read in the same scan as
   * the pivot's own. Absent when the engine does not read twins (or not for this pass): the caller then
   * makes its own passes for them.
   */
  twins?: GroupRow[][];
}

/**
 * A subset of a pass's records whose groups an engine may return beside the pass's own, from the same
 * scan: each total of a twin group is computed from the group's records in the subset (exact for every
 * aggregation), and a twin group exists only where the subset has records (the grand total always).
 * - `shifted`: the records of a period comparison's compared period (each record whose local time moved
 *   by `shift` is not after `shift.cut`), their keys on `shift.field` moved forward by the shift; only
 *   when every axis on that field groups by the compared period itself (`shift.onKeys`). Only the
 *   totals listed are computed (the others are null).
 * - `excluded`: the records whose key on `exclusion.axis` is none of its values (as `notRows`), every total.
 */
export type PivotTwin =
  { of: 'shifted'; shift: PeriodShift; totals: readonly number[] } | { of: 'excluded'; exclusion: OuterExclusion };

export interface DrillFacts {
  /** Date fields stored as calendar dates (no time of day): each is its own local date in any zone. */
  calendarDates: string[];
}

/**
 * Outer key values a pivot is restricted to: only records whose outermost row (column) key is one of
 * these are read. rowLimit, columnLimit and the filters choose them first (run-crosstab.use-case).
 */
export interface PivotRestriction {
  rows?: readonly AxisValue[];
  columns?: readonly AxisValue[];
  /**
   * Only records whose key on `axis` (the crosstab's outermost row or column axis, which the spec of an
   * "Other" pass leaves out) is none of `values`; a blank key is one of them only when null is listed.
   */
  notRows?: OuterExclusion;
  notColumns?: OuterExclusion;
  /** Subsets whose groups the engine may also return (PivotResult.twins); it may ignore them. */
  twins?: readonly PivotTwin[];
  /**
   * With `rows` (`columns`): the engine may read every record instead of the kept ones alone, the
   * records whose outermost row (column) key is not kept folded into one Other row (column), and say so
   * with `PivotResult.folded`. Its groups are then the kept keys' cells and subtotals; every total over
   * all the records (a kept row's across every column, a kept column's down every row, the grand total);
   * and the Other row's groups (rowOther, rowKey []) at each column level, its total included, the Other
   * column's (columnOther, columnKey []) at each row level, and their corner. Every total of an Other
   * group is computed from its records. An engine that declines returns the kept keys' groups alone.
   */
  fold?: true;
}

export interface OuterExclusion {
  axis: AxisSpec;
  values: readonly AxisValue[];
}

/** Keys a crosstab has at least, known without reading every record (a sample, the load's counts). */
export interface KeysAtLeast {
  /** Row keys of every level below the outermost, and values of the outermost level. */
  rows: number;
  outerRows: number;
  columns: number;
  outerColumns: number;
  /**
   * A larger sample could see more keys: the filter kept few of the sampled records. The caller may ask
   * again with `thorough` when what was seen comes near the cell limit.
   */
  moreToSee?: boolean;
}

/**
 * Aggregation over a published index version. Adapters must guarantee:
 * - every total of a group is computed from the group's records (an Average's total is the average of
 *   the records, a distinct count's total is distinct over the set), never from other groups' values;
 * - blank values (null or empty text) group together, reported as null;
 * - dates on an axis group by the field's grain, reported as YYYY-MM-DD, YYYY-MM or YYYY; with a
 *   dateGroup, by that part of their wall-clock time in the spec's zone, reported as the contract's
 *   sortable key (2001-Q1, 2001-W05, 07, ...); bins by o + k·w <= x < o + (k+1)·w, reported as the
 *   lower bound (15 significant digits, or as many as tell it from its neighbours);
 * - the filter is evaluated once: one pass over the index yields both the key counts and the groups;
 * - when `crosstabCells(keys, spec)` exceeds `maxCells` no group is returned, only the key counts, and
 *   the engine never materialises more than `maxCells / totals` cells on the way: an oversized pivot
 *   costs about as much as counting its keys.
 */
export interface PivotEngine {
  /** What answers name as meta.provenance.engine: `duckdb`, `clickhouse`. */
  readonly engineName: string;
  /** `signal` aborts when the caller's deadline passes: the engine stops and rejects with a 504. */
  pivot(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    maxCells: number,
    signal?: AbortSignal,
    restrict?: PivotRestriction,
  ): Promise<PivotResult>;
  /**
   * Lower bounds of the key counts, in bounded time whatever the index size (a sample of a fixed number
   * of records, exact per-field counts kept at load): never more than the pivot would find. `thorough`
   * samples a larger fixed number of records, for a filter that keeps few of them.
   */
  keysAtLeast(
    entry: IndexEntry,
    where: QueryNode,
    spec: CrosstabSpec,
    signal?: AbortSignal,
    opts?: { thorough?: boolean },
  ): Promise<KeysAtLeast>;
  /**
   * The smallest and largest value of a numeric field over the filtered records (null when none has
   * one): one aggregate, so a bin width too fine for the cell limit is refused before the pivot runs.
   */
  fieldRange(
    entry: IndexEntry,
    where: QueryNode,
    field: string,
    signal?: AbortSignal,
  ): Promise<[number, number] | null>;
  /**
   * For a period comparison: the filtered records' last local time, its `period`'s key, and whether the
   * period `shift` before it has records past the same elapsed span (null without records). An engine
   * without it cannot compare periods (a 400). With `spec.shift` set, `pivot` groups the shifted field
   * by each record's local time moved forward by the shift, and leaves out shifted times after its cut.
   */
  lastPeriod?(
    entry: IndexEntry,
    where: QueryNode,
    shift: PeriodShift,
    period: CalendarGroup,
    spec: CrosstabSpec,
    signal?: AbortSignal,
  ): Promise<LastPeriod | null>;
  /** Releases what this process holds for an index that is no longer published (it was dropped). */
  forget(name: string): void;
}

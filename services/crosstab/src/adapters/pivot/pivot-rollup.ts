import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { AppError } from '@quarry/errors';
import type { Row } from '@quarry/snapshots';
import type { AxisValue, GroupRow } from '../../domain/axis-value';
import type { AxisSpec } from '../../domain/crosstab-spec';
import type { PivotKeys } from '../../ports/pivot-engine.port';
import { KeyTree } from './key-tree';
import type { DistinctBits } from './pivot-distinct';
import { combine, intake, type Acc, type RollupView } from './pivot-partials';
import { twinAlias, type TwinView } from './pivot-twin';
import type { PivotPlan } from './pivot-plan';

// Finishing a pivot from DuckDB's rows: the cells' partials rolled up here, or the grouping sets read as groups.

/**
 * The most (cell, level) additions the JS roll-up may do: the 100,000 cells of the cell limit times the
 * four levels of a pivot without subtotals, the bound that held before subtotals existed.
 */
export const JS_ROLLUP_MAX_WORK = 400_000;

/**
 * Rows between two yields of the JS roll-up: a few milliseconds of work each, so a large pivot lets the
 * service's other calls run between slices instead of holding its loop for the whole roll-up.
 */
const ROLLUP_SLICE = 2000;
/** Slots of the roll-up's flat group index at most (16 MB); a larger key space is indexed by a Map. */
const DENSE_GROUP_INDEX = 4_000_000;

/** What the engine reports for a key: for a bin its lower bound (from its index), else the label. */
function keyOf(a: AxisSpec, v: unknown): AxisValue {
  const value = toAxis(v);
  if (a.bin && typeof value === 'number') return binStart(a, a.bin, value);
  return value;
}

/**
 * Bin k's lower bound. Its index must be an exact integer whose bounds differ as doubles: a width too
 * small for the data (1e-300 from -2^53) sends records to an infinite index, or to bins whose two bounds
 * are one number, which no range (and no drill query) can tell apart.
 */
function binStart(a: AxisSpec, bin: { width: number; origin: number }, k: number): number {
  const low = bin.origin + k * bin.width;
  const high = bin.origin + (k + 1) * bin.width;
  if (!Number.isSafeInteger(k) || !Number.isFinite(low) || !Number.isFinite(high) || !(low < high))
    throw AppError.invalid(
      `${a.param}.bin: width ${bin.width} from origin ${bin.origin} is too fine for ${JSON.stringify(a.field.name)} (a value falls in bin number ${k}, whose bounds cannot be told apart); use a wider width or an origin nearer the data`,
    );
  // Without float noise (0.30000000000000004 is 0.3), unless that would name a neighbouring bin.
  for (const digits of [15, 16]) {
    const short = Number(low.toPrecision(digits));
    if (Math.round((short - bin.origin) / bin.width) === k) return short;
  }
  return low;
}

function toAxis(v: unknown): AxisValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  return String(v);
}

function toNumber(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return Number(v);
}

/**
 * Sums the cells' partials into every level the pivot computes: totals, subtotals and the grand total
 * (exact for integers).
 */
export async function rollUpInJs(
  plan: RollupView,
  rows: Row[],
  /** The cells' distinct values of plan.distinct's fields (pivot-distinct); without, those totals are null. */
  distinct?: DistinctBits,
): Promise<{ keys: PivotKeys; groups: GroupRow[] }> {
  const kinds = plan.partials.map((p) => p.kind);
  const nRows = plan.rowAliases.length;
  const nCols = plan.colAliases.length;
  const rowTree = new KeyTree();
  const colTree = new KeyTree();
  // First pass: every cell's full row and column key as a node of its tree.
  const rowNode = new Int32Array(rows.length);
  const colNode = new Int32Array(rows.length);
  for (let at = 0; at < rows.length; at++) {
    if (at % (4 * ROLLUP_SLICE) === 4 * ROLLUP_SLICE - 1) await yieldToLoop();
    const row = rows[at];
    let r = 0;
    for (let i = 0; i < nRows; i++) r = rowTree.child(r, keyOf(plan.axes[i], row[plan.rowAliases[i]]));
    let c = 0;
    for (let i = 0; i < nCols; i++) c = colTree.child(c, keyOf(plan.axes[nRows + i], row[plan.colAliases[i]]));
    rowNode[at] = r;
    colNode[at] = c;
  }
  // Second pass: each cell's partials into its group at every level; a group is (level, row node,
  // column node) as one number (levels x nodes x nodes stays far below 2^53 within the cell limit).
  const NR = rowTree.keys.length;
  const NC = colTree.keys.length;
  // Where the key space is small enough (any pivot within the cell limit on two axes), a flat array
  // finds a group: a Map of 100,000 groups took half of the roll-up's time in lookups.
  const space = plan.levels.length * NR * NC;
  const dense = space <= DENSE_GROUP_INDEX ? new Int32Array(space).fill(-1) : undefined;
  const sparse = dense ? undefined : new Map<number, number>();
  const aliases = plan.partials.map((p) => p.alias);
  const found: Array<{ rowKey: AxisValue[]; columnKey: AxisValue[]; acc: Acc[] }> = [];
  let rowKeys = 0;
  let colKeys = 0;
  for (let at = 0; at < rows.length; at++) {
    if (at % ROLLUP_SLICE === ROLLUP_SLICE - 1) await yieldToLoop();
    const row = rows[at];
    for (let level = 0; level < plan.levels.length; level++) {
      const [r, c] = plan.levels[level];
      const rn = rowTree.up(rowNode[at], nRows - r);
      const cn = colTree.up(colNode[at], nCols - c);
      const key = (level * NR + rn) * NC + cn;
      const seen = dense ? dense[key] : (sparse?.get(key) ?? -1);
      if (seen >= 0) {
        const acc = found[seen].acc;
        for (let i = 0; i < acc.length; i++) acc[i] = combine(kinds[i], acc[i], intake(row[aliases[i]]));
        distinct?.add(seen, at);
      } else {
        if (dense) dense[key] = found.length;
        else sparse?.set(key, found.length);
        found.push({
          rowKey: rowTree.keys[rn],
          columnKey: colTree.keys[cn],
          acc: aliases.map((a) => intake(row[a])),
        });
        distinct?.add(found.length - 1, at);
        if (r === nRows && c === 0) rowKeys++;
        if (r === 0 && c === nCols && nCols > 0) colKeys++;
      }
    }
  }
  const groups: GroupRow[] = [];
  for (const [i, g] of found.entries()) {
    if (groups.length % (4 * ROLLUP_SLICE) === 4 * ROLLUP_SLICE - 1) await yieldToLoop();
    const counts = distinct?.counts(i);
    groups.push({ rowKey: g.rowKey, columnKey: g.columnKey, values: plan.totals.map((t) => t.value(g.acc, counts)) });
  }
  if (rows.length === 0) {
    const none = plan.partials.map(() => null);
    const counts = (plan.distinct ?? []).map(() => 0);
    groups.push({ rowKey: [], columnKey: [], values: plan.totals.map((t) => t.value(none, counts)) });
  }
  return { keys: { rows: rowKeys, columns: nCols ? colKeys : 1 }, groups };
}

/**
 * Each row of the grouping sets statement as a group: GROUPING() says how deep its row and column keys
 * go (always a prefix). Keys are interned, so the groups share their key arrays as the JS roll-up's do.
 */
export function fromGroupingSets(plan: PivotPlan, rows: Row[]): GroupRow[] {
  return groupsOfGroupingSets(plan, rows, (row) => plan.totals.map((_, i) => toNumber(row[`__t${i}`])));
}

/** fromGroupingSets for any engine's rows: `values` reads a row's totals. */
export function groupsOfGroupingSets(
  plan: { rowAliases: readonly string[]; colAliases: readonly string[]; axes: readonly AxisSpec[] },
  rows: Row[],
  values: (row: Row) => Array<number | null>,
): GroupRow[] {
  const aliases = [...plan.rowAliases, ...plan.colAliases];
  const nRows = plan.rowAliases.length;
  const groupedOut = (gid: number, i: number) => (gid & (1 << (aliases.length - 1 - i))) !== 0;
  const rowTree = new KeyTree();
  const colTree = new KeyTree();
  return rows.map((row) => {
    const gid = Number(row.gid);
    let r = 0;
    for (let i = 0; i < nRows && !groupedOut(gid, i); i++) r = rowTree.child(r, keyOf(plan.axes[i], row[aliases[i]]));
    let c = 0;
    for (let i = nRows; i < aliases.length && !groupedOut(gid, i); i++)
      c = colTree.child(c, keyOf(plan.axes[i], row[aliases[i]]));
    return { rowKey: rowTree.keys[r], columnKey: colTree.keys[c], values: values(row) };
  });
}

const isGrand = (g: GroupRow) => g.rowKey.length === 0 && g.columnKey.length === 0;

/** Totals a twin does not compute are null. */
const computed = (view: TwinView, g: GroupRow): GroupRow => ({
  ...g,
  values: g.values.map((v, i) => (view.computes(i) ? v : null)),
});

/** Each twin's groups from the cells the JS roll-up read (rows without the twin's records left out). */
export async function twinGroupsFromCells(views: readonly TwinView[], cells: Row[]): Promise<GroupRow[][]> {
  const out: GroupRow[][] = [];
  for (const view of views) {
    const mine = cells.filter((c) => Number(c[view.count] ?? 0) > 0);
    // Every group rolled up from these cells has records; without any, the grand total alone (empty).
    const { groups } = await rollUpInJs(view, mine);
    out.push(groups.map((g) => computed(view, g)));
  }
  return out;
}

/** Each twin's groups from the grouping sets' rows (its totals in its own columns). */
export function twinGroupsFromSets(views: readonly TwinView[], rows: Row[]): GroupRow[][] {
  return views.map((view, k) => {
    const groups = groupsOfGroupingSets(view, rows, (row) =>
      view.totals.map((_, i) => toNumber(row[twinAlias(`__t${i}`, k)])),
    );
    return groups.filter((g, at) => isGrand(g) || Number(rows[at][view.count] ?? 0) > 0).map((g) => computed(view, g));
  });
}

import { AppError, quoteInput } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { FieldResolver, isNumeric, type FieldDef } from '@quarry/query-language';

import {
  defaultTotalName,
  formulaRefs,
  MAX_CROSSTAB_CELLS,
  PERCENT_SHOW_AS,
  NUMERIC_AGGREGATIONS,
  resolveFormulas,
  type Aggregation,
  type CompleteAxis,
  type CompleteAxisOrder,
  type CompletePivot,
  type CompleteTotal,
  type DateGroup,
  type FilterOp,
  type FormulaNode,
  type ShowAs,
  type TotalLook,
  type TotalsOn,
} from '@quarry/contract';

import type { CompareSpec, ComparePartial, PeriodShift } from './period-shift';

export type { Aggregation, DateGroup, ShowAs } from '@quarry/contract';
export const MAX_CELLS = MAX_CROSSTAB_CELLS;

/** What a chart's legend adds to a total's name for what its values show. */
const SHOWN_AS: Record<ShowAs, string> = {
  value: '',
  percentOfGrandTotal: ' (% of grand total)',
  percentOfRowTotal: ' (% of row total)',
  percentOfColumnTotal: ' (% of column total)',
  runningTotal: ' (running total)',
  differenceFromPrevious: ' (difference from previous)',
  percentDifferenceFromPrevious: ' (% difference from previous)',
  percentOfParentRow: ' (% of parent row)',
  percentOfParentColumn: ' (% of parent column)',
  rankInColumn: ' (rank in column)',
  rankInRow: ' (rank in row)',
  movingAverage: ' (moving average)',
};

/**
 * How a total's values are shown, the one thing renderers ask of it: whether they are percentages (a %
 * sign in HTML, fractions in a percent format in XLSX), and the label a chart gives the series. A new
 * way of showing or formatting a total is decided here, not in each renderer.
 */
export interface TotalDisplay {
  percent: boolean;
  label: string;
}

/** A total's format and colours (the contract refused a percentage written as money or a unit). */
function lookOf(t: CompleteTotal): Pick<TotalSpec, 'look'> {
  const { format, highlight, colorScale } = t;
  if (!format && !highlight && !colorScale) return {};
  return {
    look: {
      ...(format ? { format } : {}),
      ...(highlight ? { highlight } : {}),
      ...(colorScale ? { colorScale } : {}),
    },
  };
}

export function displayOf(
  t: Pick<TotalSpec, 'name' | 'showAs' | 'window'> & { compare?: { as: string } },
): TotalDisplay {
  const shown = t.showAs === 'movingAverage' ? ` (moving average of ${t.window ?? 0})` : SHOWN_AS[t.showAs];
  const percent = PERCENT_SHOW_AS.has(t.showAs) || t.compare?.as === 'percentDifference';
  return { percent, label: `${t.name}${shown}` };
}

/** rowOrder / columnOrder: siblings at every level ordered by label, or by a measure's total at that level. */
export type AxisOrder = CompleteAxisOrder;

/** The cells a pivot fills: rows × columns (the Total column alone without column fields) × totals. */
export function crosstabCells(keys: { rows: number; columns: number }, spec: Pick<CrosstabSpec, 'totals'>): number {
  return keys.rows * Math.max(keys.columns, 1) * spec.totals.length;
}

export interface TotalSpec {
  /** Absent for a calculated total (`formula`). */
  aggregation?: Aggregation;
  /** The measured field (Sum, Average, Min, Max, Median, Percentile, StdDev; Count of non-blank values). */
  field?: FieldDef;
  /** Count of distinct values of this field (a dynamic view, or CountDistinct). */
  distinctOf?: FieldDef;
  /** The dynamic view's name as the index spells it (distinctOf's view, or Records). */
  dynamicView?: string;
  /** With Percentile: 0 < p < 100. */
  percentile?: number;
  /** A calculated total, over the other totals by index at the same place. */
  formula?: { text: string; node: FormulaNode; refs: Map<string, number> };
  name: string;
  showAs: ShowAs;
  /** Its number format and cell colours, when it has any: renderers only, no value changes. */
  look?: TotalLook;
  /** With movingAverage: how many rows it averages. */
  window?: number;
  /** Compared with the previous period or year (period-compare.ts). */
  compare?: CompareSpec;
}

/** A row or column axis: a field, optionally grouped by a date part or in numeric bins. */
export interface AxisSpec {
  field: FieldDef;
  reverse: boolean;
  dateGroup?: DateGroup;
  bin?: { width: number; origin: number };
  /** Where the caller wrote it (`rows[0]`, `columns[1]`): errors about its keys name it. */
  param: string;
  /** How this axis's keys compare: bins are numbers, date groups sortable text. */
  keyType: FieldDef['type'];
  /** As headers show it: the field, and its grouping. */
  name: string;
  /** A manual order of its keys (as JSON gives them): these first, in this order. */
  order?: ReadonlyArray<string | number | boolean | null>;
  /** The key of the data's partial last period, on the axis of a compared period: headers mark it. */
  partialKey?: string;
}

export interface FilterSpec {
  measure: number;
  op: FilterOp;
  value: number;
}

export interface CrosstabSpec {
  rows: AxisSpec[];
  columns: AxisSpec[];
  totals: TotalSpec[];
  /** Calculated totals (indexes into totals) in an order where each comes after what it reads. */
  formulaOrder: number[];
  timeZone: string;
  rowFilter: FilterSpec | null;
  columnFilter: FilterSpec | null;
  subtotals: boolean;
  /** Where a table (html, csv, xlsx) puts its totals. */
  totalsOn: TotalsOn;
  rowOrder: AxisOrder;
  columnOrder: AxisOrder;
  /** null: every value of the outermost level. */
  rowLimit: number | null;
  columnLimit: number | null;
  /** An "Other (N)" row (column) over the outermost values not shown; only with a limit. */
  otherRow: boolean;
  otherColumn: boolean;
  /** The shifted pivot of a period comparison: date keys from each record's time moved this far. */
  shift?: PeriodShift;
  /** Set once the comparison found the data's last period partial. */
  comparePartial?: ComparePartial;
}

const binText = (n: number) => String(Number(n.toPrecision(15)));

function axisName(field: FieldDef, a: CompleteAxis): string {
  if (a.dateGroup) return `${field.name} (${a.dateGroup})`;
  if (a.bin)
    return `${field.name} (bins of ${binText(a.bin.width)}${a.bin.origin ? ` from ${binText(a.bin.origin)}` : ''})`;
  return field.name;
}

/**
 * The (row depth, column depth) levels a pivot computes: the cells, the Total column and row and the
 * grand total; the subtotal rows and columns when asked; and each outer level's totals when an axis is
 * ordered by value (a group is ordered by its own total, computed from records).
 */
export function pivotLevels(
  spec: Pick<
    CrosstabSpec,
    'rows' | 'columns' | 'subtotals' | 'rowOrder' | 'columnOrder' | 'rowFilter' | 'columnFilter'
  > & { totals?: ReadonlyArray<Pick<TotalSpec, 'showAs'>> },
): Array<[number, number]> {
  const R = spec.rows.length;
  const C = spec.columns.length;
  const outer = (n: number) => Array.from({ length: Math.max(n - 1, 0) }, (_, i) => i + 1);
  // A share of the parent group reads the enclosing subtotals along its axis, shown or not.
  const parentRows = spec.totals?.some((t) => t.showAs === 'percentOfParentRow') ?? false;
  const parentColumns = spec.totals?.some((t) => t.showAs === 'percentOfParentColumn') ?? false;
  const rowDepths = [R, ...(spec.subtotals || parentRows ? outer(R) : []), 0];
  const colDepths = [...(C ? [C] : []), ...(spec.subtotals || parentColumns ? outer(C) : []), 0];
  const levels = new Map<string, [number, number]>();
  const add = (r: number, c: number) => levels.set(`${r}:${c}`, [r, c]);
  for (const r of rowDepths) for (const c of colDepths) add(r, c);
  // Ordering by value, and filtering, read each outer group's own total.
  if (spec.rowOrder.by === 'value' || spec.rowFilter) for (const r of outer(R)) add(r, 0);
  if (spec.columnOrder.by === 'value' || spec.columnFilter) for (const c of outer(C)) add(0, c);
  return [...levels.values()];
}

/**
 * Checks a request as the contract completed it (every default applied, every rule the contract knows
 * checked: words, ranges, measure indexes) against what only the index can tell: its fields and views.
 */
export function crosstabSpec(entry: IndexEntry, input: CompletePivot): CrosstabSpec {
  const fields = new FieldResolver(entry.fields as FieldDef[]);
  const field = (name: string, where: string) => {
    const f = fields.find(name);
    if (!f) throw AppError.invalid(`${where}: unknown field ${quoteInput(name)}`);
    return f;
  };
  const axis = (a: CompleteAxis, where: string, fieldWhere: string): AxisSpec => {
    const f = field(a.field, fieldWhere);
    if (a.dateGroup && f.type !== 'date')
      throw AppError.invalid(
        `${where}.dateGroup: ${quoteInput(f.name)} is ${f.type}, not a date; dateGroup groups a date field`,
      );
    if (a.bin && !isNumeric(f.type))
      throw AppError.invalid(
        `${where}.bin: ${quoteInput(f.name)} is ${f.type}, not a number; bin groups a numeric field`,
      );
    return {
      field: f,
      reverse: a.reverse,
      ...(a.dateGroup ? { dateGroup: a.dateGroup } : {}),
      ...(a.bin ? { bin: a.bin } : {}),
      keyType: a.dateGroup ? 'string' : a.bin ? 'number' : f.type,
      param: where,
      name: axisName(f, a),
      ...(a.order ? { order: a.order } : {}),
    };
  };
  // A row sent as a field name is named by its index, as it always was.
  const rows = input.rows.map((r, i) => axis(r, `rows[${i}]`, `rows[${i}]`));
  const columns = input.columns.map((c, i) => axis(c, `columns[${i}]`, `columns[${i}].field`));
  const views = ['Records', ...entry.views.map((v) => v.name)];

  const totals = input.totals.map((t, i): TotalSpec => ({
    ...total(t, i),
    showAs: t.showAs,
    ...(t.window !== undefined ? { window: t.window } : {}),
    ...lookOf(t),
  }));
  // The contract resolved the formulas already (names, cycles); here they are resolved against the
  // names as the index spells them, which the contract's default names match case-insensitively.
  const resolved = resolveFormulas(
    totals.map((t, i) => ({ ...input.totals[i], name: t.name, aggregationType: t.aggregation })),
  );
  if (resolved.problems.length)
    throw AppError.invalid(resolved.problems.map((p) => `totals[${p.total}].formula: ${p.message}`).join('; '));
  for (const [i, f] of resolved.parsed) {
    const refs = new Map<string, number>();
    // By name as written in the formula, to the index it resolved to.
    formulaRefs(f.node).forEach((r, k) => refs.set(r.name.toLowerCase(), f.reads[k]));
    totals[i].formula = { text: input.totals[i].formula ?? '', node: f.node, refs };
  }
  return {
    rows,
    columns,
    totals,
    formulaOrder: resolved.order,
    timeZone: input.timeZone,
    rowFilter: input.rowFilter ?? null,
    columnFilter: input.columnFilter ?? null,
    subtotals: input.subtotals,
    totalsOn: input.totalsOn,
    rowOrder: input.rowOrder,
    columnOrder: input.columnOrder,
    rowLimit: input.rowLimit ?? null,
    columnLimit: input.columnLimit ?? null,
    // Without a limit nothing is left out, so there is no Other.
    otherRow: input.otherRow && input.rowLimit !== undefined,
    otherColumn: input.otherColumn && input.columnLimit !== undefined && columns.length > 0,
  };

  function total(t: CompleteTotal, i: number): Omit<TotalSpec, 'showAs' | 'look'> {
    const aggregation = t.aggregationType;
    // A calculated total: the formula is attached once every total has its name.
    if (aggregation === undefined) return { name: t.name ?? `Total ${i + 1}` };
    const dynamicView = t.dynamicView;
    if (dynamicView !== undefined) {
      if (aggregation !== 'Count')
        throw AppError.invalid(`totals[${i}]: dynamicView goes with Count, not ${aggregation}`);
      if (t.field !== undefined) throw AppError.invalid(`totals[${i}]: give field or dynamicView, not both`);
      const view = entry.views.find((v) => v.name.toLowerCase() === dynamicView.toLowerCase());
      const isRecords = dynamicView.toLowerCase() === 'records';
      if (!view && !isRecords)
        throw AppError.invalid(
          `totals[${i}].dynamicView: unknown view ${quoteInput(dynamicView)}; this index has ${views.join(', ')}`,
        );
      const viewName = view?.name ?? 'Records';
      return {
        aggregation,
        distinctOf: view ? field(view.field, `dynamic view ${view.name}`) : undefined,
        dynamicView: viewName,
        name: t.name || `Count (${viewName})`,
      };
    }
    if (t.field === undefined) {
      if (aggregation !== 'Count') throw AppError.invalid(`totals[${i}]: ${aggregation} needs a numeric field`);
      return { aggregation, name: t.name || 'Count (Records)' };
    }
    const f = field(t.field, `totals[${i}].field`);
    if (NUMERIC_AGGREGATIONS.includes(aggregation) && !isNumeric(f.type)) {
      throw AppError.invalid(
        `totals[${i}]: ${aggregation} needs a numeric field, but ${quoteInput(f.name)} is ${f.type}`,
      );
    }
    const name = t.name || defaultTotalName({ aggregationType: aggregation, field: f.name, percentile: t.percentile });
    if (aggregation === 'CountDistinct') return { aggregation, distinctOf: f, name };
    return { aggregation, field: f, name, ...(t.percentile !== undefined ? { percentile: t.percentile } : {}) };
  }
}

import { AppError, quoteInput } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { FieldResolver, isNumeric, type FieldDef } from '@quarry/query-language';

import {
  AGGREGATIONS,
  AXIS_LIMIT_MAX,
  MAX_CROSSTAB_CELLS,
  SHOW_AS,
  type Aggregation,
  type ShowAs,
} from '@quarry/contract';

export type { Aggregation, ShowAs } from '@quarry/contract';
export const MAX_CELLS = MAX_CROSSTAB_CELLS;
export const ORDER_BY = ['label', 'value'] as const;
export const DIRECTIONS = ['asc', 'desc'] as const;

/** rowOrder / columnOrder: siblings at every level ordered by label, or by a measure's total at that level. */
export interface AxisOrder {
  by: (typeof ORDER_BY)[number];
  /** Index into totals (by "value"). */
  measure: number;
  direction: (typeof DIRECTIONS)[number];
}

const LABEL_ORDER: AxisOrder = { by: 'label', measure: 0, direction: 'asc' };

/** The cells a pivot fills: rows × columns (the Total column alone without column fields) × totals. */
export function crosstabCells(keys: { rows: number; columns: number }, spec: Pick<CrosstabSpec, 'totals'>): number {
  return keys.rows * Math.max(keys.columns, 1) * spec.totals.length;
}

export interface TotalSpec {
  aggregation: Aggregation;
  /** The measured field (Sum, Average, Min, Max; Count of non-blank values). */
  field?: FieldDef;
  /** Count of distinct values of this field (a dynamic view). */
  distinctOf?: FieldDef;
  /** The dynamic view's name as the index spells it (distinctOf's view, or Records). */
  dynamicView?: string;
  name: string;
  showAs: ShowAs;
}

export interface CrosstabSpec {
  rows: FieldDef[];
  columns: Array<{ field: FieldDef; reverse: boolean }>;
  totals: TotalSpec[];
  subtotals: boolean;
  rowOrder: AxisOrder;
  columnOrder: AxisOrder;
  /** null: every value of the outermost level. */
  rowLimit: number | null;
  columnLimit: number | null;
}

/** An order as it arrives: '' (or an absent order) means the default. */
export interface AxisOrderInput {
  by: string;
  measure: number;
  direction: string;
}

export interface CrosstabRequestInput {
  rows: string[];
  columns: Array<{ field: string; reverse: boolean }>;
  totals: Array<{ aggregationType: string; field: string; dynamicView: string; name: string; showAs?: string }>;
  subtotals?: boolean;
  rowOrder?: AxisOrderInput | null;
  columnOrder?: AxisOrderInput | null;
  /** 0 or absent: no limit. */
  rowLimit?: number;
  columnLimit?: number;
}

const allowed = (values: readonly string[]) => values.map((v) => `"${v}"`).join(', ');

function axisOrder(input: AxisOrderInput | null | undefined, param: string, totals: number): AxisOrder {
  if (!input || (input.by === '' && input.direction === '' && input.measure === 0)) return LABEL_ORDER;
  const by = ORDER_BY.find((b) => b === (input.by === '' ? 'label' : input.by));
  if (!by) throw AppError.invalid(`${param}.by ${quoteInput(input.by)} is not one of ${allowed(ORDER_BY)}`);
  const direction = DIRECTIONS.find((d) => d === (input.direction === '' ? 'asc' : input.direction.toLowerCase()));
  if (!direction)
    throw AppError.invalid(`${param}.direction ${quoteInput(input.direction)} is not one of ${allowed(DIRECTIONS)}`);
  if (!Number.isInteger(input.measure) || input.measure < 0 || input.measure >= totals) {
    throw AppError.invalid(`${param}.measure must be an index into totals, from 0 to ${totals - 1}`);
  }
  return { by, measure: input.measure, direction };
}

function axisLimit(value: number | undefined, param: string): number | null {
  if (value === undefined) return null;
  if (!Number.isInteger(value) || value < 1 || value > AXIS_LIMIT_MAX)
    throw AppError.invalid(`${param} must be an integer between 1 and ${AXIS_LIMIT_MAX}`);
  return value;
}

/**
 * The (row depth, column depth) levels a pivot computes: the cells, the Total column and row and the
 * grand total; the subtotal rows and columns when asked; and each outer level's totals when an axis is
 * ordered by value (a group is ordered by its own total, computed from records).
 */
export function pivotLevels(
  spec: Pick<CrosstabSpec, 'rows' | 'columns' | 'subtotals' | 'rowOrder' | 'columnOrder'>,
): Array<[number, number]> {
  const R = spec.rows.length;
  const C = spec.columns.length;
  const outer = (n: number) => Array.from({ length: Math.max(n - 1, 0) }, (_, i) => i + 1);
  const rowDepths = [R, ...(spec.subtotals ? outer(R) : []), 0];
  const colDepths = [...(C ? [C] : []), ...(spec.subtotals ? outer(C) : []), 0];
  const levels = new Map<string, [number, number]>();
  const add = (r: number, c: number) => levels.set(`${r}:${c}`, [r, c]);
  for (const r of rowDepths) for (const c of colDepths) add(r, c);
  if (spec.rowOrder.by === 'value') for (const r of outer(R)) add(r, 0);
  if (spec.columnOrder.by === 'value') for (const c of outer(C)) add(0, c);
  return [...levels.values()];
}

/** Checks a request against what only the index can tell (its fields and views); the contract checked the rest and applied the defaults. */
export function crosstabSpec(entry: IndexEntry, input: CrosstabRequestInput): CrosstabSpec {
  const fields = new FieldResolver(entry.fields as FieldDef[]);
  const field = (name: string, where: string) => {
    const f = fields.find(name);
    if (!f) throw AppError.invalid(`${where}: unknown field ${quoteInput(name)}`);
    return f;
  };
  if (input.rows.length === 0) throw AppError.invalid('rows must name at least one field');
  if (input.totals.length === 0) throw AppError.invalid('totals must have at least one item');
  const rows = input.rows.map((r, i) => field(r, `rows[${i}]`));
  const columns = input.columns.map((c, i) => ({ field: field(c.field, `columns[${i}].field`), reverse: c.reverse }));
  const views = ['Records', ...entry.views.map((v) => v.name)];

  const totals = input.totals.map((t, i): TotalSpec => ({ ...total(t, i), showAs: showAs(t.showAs, i) }));
  return {
    rows,
    columns,
    totals,
    subtotals: input.subtotals ?? false,
    rowOrder: axisOrder(input.rowOrder, 'rowOrder', totals.length),
    columnOrder: axisOrder(input.columnOrder, 'columnOrder', totals.length),
    rowLimit: axisLimit(input.rowLimit, 'rowLimit'),
    columnLimit: axisLimit(input.columnLimit, 'columnLimit'),
  };

  function showAs(value: string | undefined, i: number): ShowAs {
    if (value === undefined || value === '') return 'value';
    const found = SHOW_AS.find((s) => s === value);
    if (!found) throw AppError.invalid(`totals[${i}].showAs ${quoteInput(value)} is not one of ${allowed(SHOW_AS)}`);
    return found;
  }

  function total(t: CrosstabRequestInput['totals'][number], i: number): Omit<TotalSpec, 'showAs'> {
    const aggregation = AGGREGATIONS.find((a) => a.toLowerCase() === t.aggregationType.trim().toLowerCase());
    if (!aggregation)
      throw AppError.invalid(
        `totals[${i}].aggregationType ${quoteInput(t.aggregationType)} is not one of ${AGGREGATIONS.join(', ')}`,
      );
    if (t.dynamicView !== '') {
      if (aggregation !== 'Count')
        throw AppError.invalid(`totals[${i}]: dynamicView goes with Count, not ${aggregation}`);
      if (t.field !== '') throw AppError.invalid(`totals[${i}]: give field or dynamicView, not both`);
      const view = entry.views.find((v) => v.name.toLowerCase() === t.dynamicView.toLowerCase());
      const isRecords = t.dynamicView.toLowerCase() === 'records';
      if (!view && !isRecords)
        throw AppError.invalid(
          `totals[${i}].dynamicView: unknown view ${quoteInput(t.dynamicView)}; this index has ${views.join(', ')}`,
        );
      const viewName = view?.name ?? 'Records';
      return {
        aggregation,
        distinctOf: view ? field(view.field, `dynamic view ${view.name}`) : undefined,
        dynamicView: viewName,
        name: t.name || `Count (${viewName})`,
      };
    }
    if (t.field === '') {
      if (aggregation !== 'Count') throw AppError.invalid(`totals[${i}]: ${aggregation} needs a numeric field`);
      return { aggregation, name: t.name || 'Count (Records)' };
    }
    const f = field(t.field, `totals[${i}].field`);
    if (aggregation !== 'Count' && !isNumeric(f.type)) {
      throw AppError.invalid(
        `totals[${i}]: ${aggregation} needs a numeric field, but ${quoteInput(f.name)} is ${f.type}`,
      );
    }
    return { aggregation, field: f, name: t.name || `${aggregation} (${f.name})` };
  }
}

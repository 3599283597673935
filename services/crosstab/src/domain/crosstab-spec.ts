import { AppError, quoteInput } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { FieldResolver, isNumeric, type FieldDef } from '@quarry/query-language';

import {
  MAX_CROSSTAB_CELLS,
  type Aggregation,
  type CompleteAxisOrder,
  type CompleteCrosstabExecute,
  type ShowAs,
} from '@quarry/contract';

export type { Aggregation, ShowAs } from '@quarry/contract';
export const MAX_CELLS = MAX_CROSSTAB_CELLS;

/** rowOrder / columnOrder: siblings at every level ordered by label, or by a measure's total at that level. */
export type AxisOrder = CompleteAxisOrder;

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

/**
 * The request as the contract completed it: every default applied and every rule the contract knows
 * checked (words, ranges, measure indexes), so only what the index can tell is left to check here.
 */
export type CrosstabRequestInput = Pick<
  CompleteCrosstabExecute,
  'rows' | 'columns' | 'totals' | 'subtotals' | 'rowOrder' | 'columnOrder' | 'rowLimit' | 'columnLimit'
>;

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
  const rows = input.rows.map((r, i) => field(r, `rows[${i}]`));
  const columns = input.columns.map((c, i) => ({ field: field(c.field, `columns[${i}].field`), reverse: c.reverse }));
  const views = ['Records', ...entry.views.map((v) => v.name)];

  const totals = input.totals.map((t, i): TotalSpec => ({ ...total(t, i), showAs: t.showAs }));
  return {
    rows,
    columns,
    totals,
    subtotals: input.subtotals,
    rowOrder: input.rowOrder,
    columnOrder: input.columnOrder,
    rowLimit: input.rowLimit ?? null,
    columnLimit: input.columnLimit ?? null,
  };

  function total(t: CrosstabRequestInput['totals'][number], i: number): Omit<TotalSpec, 'showAs'> {
    const aggregation = t.aggregationType;
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
    if (aggregation !== 'Count' && !isNumeric(f.type)) {
      throw AppError.invalid(
        `totals[${i}]: ${aggregation} needs a numeric field, but ${quoteInput(f.name)} is ${f.type}`,
      );
    }
    return { aggregation, field: f, name: t.name || `${aggregation} (${f.name})` };
  }
}

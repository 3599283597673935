import { AppError, quoteInput } from '@quarry/errors';
import type { IndexEntry } from '@quarry/metadata-store';
import { FieldResolver, isNumeric, type FieldDef } from '@quarry/query-language';

export const AGGREGATIONS = ['Sum', 'Count', 'Average', 'Min', 'Max'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export const MAX_CELLS = 100_000;

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
  name: string;
}

export interface CrosstabSpec {
  rows: FieldDef[];
  columns: Array<{ field: FieldDef; reverse: boolean }>;
  totals: TotalSpec[];
}

export interface CrosstabRequestInput {
  rows: string[];
  columns: Array<{ field: string; reverse: boolean }>;
  totals: Array<{ aggregationType: string; field: string; dynamicView: string; name: string }>;
}

/** Checks a request against the index and fills defaults (DESIGN.md "API decisions"). */
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

  const totals = input.totals.map((t, i): TotalSpec => {
    const aggregation = AGGREGATIONS.find((a) => a.toLowerCase() === t.aggregationType.trim().toLowerCase());
    if (!aggregation) throw AppError.invalid(`totals[${i}].aggregationType ${quoteInput(t.aggregationType)} is not one of ${AGGREGATIONS.join(', ')}`);
    if (t.dynamicView !== '') {
      if (aggregation !== 'Count') throw AppError.invalid(`totals[${i}]: dynamicView goes with Count, not ${aggregation}`);
      if (t.field !== '') throw AppError.invalid(`totals[${i}]: give field or dynamicView, not both`);
      const view = entry.views.find((v) => v.name.toLowerCase() === t.dynamicView.toLowerCase());
      const isRecords = t.dynamicView.toLowerCase() === 'records';
      if (!view && !isRecords) throw AppError.invalid(`totals[${i}].dynamicView: unknown view ${quoteInput(t.dynamicView)}; this index has ${views.join(', ')}`);
      const viewName = view?.name ?? 'Records';
      return {
        aggregation,
        distinctOf: view ? field(view.field, `dynamic view ${view.name}`) : undefined,
        name: t.name || `Count (${viewName})`,
      };
    }
    if (t.field === '') {
      if (aggregation !== 'Count') throw AppError.invalid(`totals[${i}]: ${aggregation} needs a numeric field`);
      return { aggregation, name: t.name || 'Count (Records)' };
    }
    const f = field(t.field, `totals[${i}].field`);
    if (aggregation !== 'Count' && !isNumeric(f.type)) {
      throw AppError.invalid(`totals[${i}]: ${aggregation} needs a numeric field, but ${quoteInput(f.name)} is ${f.type}`);
    }
    return { aggregation, field: f, name: t.name || `${aggregation} (${f.name})` };
  });
  return { rows, columns, totals };
}

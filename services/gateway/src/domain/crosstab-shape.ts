import type { CrosstabShape } from '@quarry/metadata-store';

/** Axes and totals a shape keeps at most: a crosstab past them is not one a rollup would be made for. */
const MAX_ITEMS = 16;
const MAX_NAME = 256;

const name = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME ? v : undefined;

function axes(v: unknown): CrosstabShape['rows'] | undefined {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > MAX_ITEMS) return undefined;
  const out: CrosstabShape['rows'] = [];
  for (const a of v as unknown[]) {
    const field =
      name(a) ?? (a !== null && typeof a === 'object' ? name((a as Record<string, unknown>).field) : undefined);
    if (!field) return undefined;
    const group = a !== null && typeof a === 'object' ? name((a as Record<string, unknown>).dateGroup) : undefined;
    // A binned axis is no rollup's: its bins are read from the records.
    if (a !== null && typeof a === 'object' && (a as Record<string, unknown>).bin !== undefined) return undefined;
    out.push(group ? { field, dateGroup: group } : { field });
  }
  return out;
}

/**
 * What the audit trail keeps of a CROSSTAB.EXECUTE call's params (AuditEntry.shape): its axes and totals
 * by field name, as JSON; never the query, a filter's value or a formula. Null for params that are not a
 * well-formed crosstab (they are validated after the call is recorded).
 */
export function crosstabShape(params: Record<string, unknown>): string | null {
  const rows = axes(params.rows);
  const columns = axes(params.columns);
  const sent = params.totals;
  if (!rows || !columns || !Array.isArray(sent) || sent.length === 0 || sent.length > MAX_ITEMS) return null;
  const totals: CrosstabShape['totals'] = [];
  for (const t of sent as unknown[]) {
    if (t === null || typeof t !== 'object') return null;
    const { aggregationType, field, dynamicView } = t as Record<string, unknown>;
    const aggregation = name(aggregationType);
    // A calculated total is computed from the others; a dynamic view names no field here.
    if (!aggregation || dynamicView !== undefined) continue;
    const f = name(field);
    totals.push(f ? { aggregation, field: f } : { aggregation });
  }
  const shape: CrosstabShape = { rows, columns, totals };
  return JSON.stringify(shape);
}

import type { Rec } from './datasets';

export type Agg = 'Sum' | 'Count' | 'Average' | 'Min' | 'Max';
export interface ModelTotal {
  agg: Agg;
  field?: string;
  distinct?: string;
  name: string;
}
export interface ModelSpec {
  rows: string[];
  columns: Array<{ field: string; reverse?: boolean }>;
  totals: ModelTotal[];
  /** how to label a value of a field on an axis (dates by day, etc.) */
  label?: (field: string, v: unknown) => string;
}

const blank = (v: unknown) => v === null || v === undefined || v === '';
const defaultLabel = (_f: string, v: unknown) => (blank(v) ? '(blank)' : String(v));

function aggregate(records: Rec[], t: ModelTotal): number | null {
  if (t.distinct) return new Set(records.map((r) => r[t.distinct!]).filter((v) => !blank(v))).size;
  if (t.agg === 'Count') return t.field ? records.filter((r) => !blank(r[t.field!])).length : records.length;
  const xs = records.map((r) => r[t.field!]).filter((v): v is number => typeof v === 'number');
  if (xs.length === 0) return null;
  switch (t.agg) {
    case 'Sum':
      return xs.reduce((a, b) => a + b, 0);
    case 'Average':
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    case 'Min':
      return Math.min(...xs);
    default:
      return Math.max(...xs);
  }
}

function compareLabels(a: string, b: string, numeric: boolean): number {
  if (a === '(blank)' || b === '(blank)') return a === b ? 0 : a === '(blank)' ? 1 : -1;
  if (numeric) return Number(a) - Number(b);
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The crosstab computed in plain JS: {rowKey → {columnPath → value}} keyed as the HTML reader keys them,
 * with the row order and column order Quarry must produce.
 */
export function pivotModel(records: Rec[], spec: ModelSpec) {
  const label = spec.label ?? defaultLabel;
  const numeric = (f: string) => records.every((r) => blank(r[f]) || typeof r[f] === 'number');
  const rowKeyOf = (r: Rec) => spec.rows.map((f) => label(f, r[f]));
  const colKeyOf = (r: Rec) => spec.columns.map((c) => label(c.field, r[c.field]));
  const sortKeys = (keys: string[][], fields: Array<{ field: string; reverse?: boolean }>) =>
    keys.sort((a, b) => {
      for (let i = 0; i < fields.length; i++) {
        if ((a[i] === '(blank)') !== (b[i] === '(blank)')) return a[i] === '(blank)' ? 1 : -1;
        const c = compareLabels(a[i], b[i], numeric(fields[i].field));
        if (c !== 0) return fields[i].reverse ? -c : c;
      }
      return 0;
    });
  const uniq = (keys: string[][]) => [...new Map(keys.map((k) => [JSON.stringify(k), k])).values()];
  const rowKeys = sortKeys(
    uniq(records.map(rowKeyOf)),
    spec.rows.map((f) => ({ field: f })),
  );
  const colKeys = spec.columns.length ? sortKeys(uniq(records.map(colKeyOf)), spec.columns) : [[]];
  const nameRow = spec.totals.length > 1 || spec.columns.length === 0;
  const path = (colLabels: string[], t: ModelTotal) => [...colLabels, ...(nameRow ? [t.name] : [])].join(' | ');
  const totalPath = (t: ModelTotal) =>
    path(
      spec.columns.map(() => 'Total'),
      t,
    );

  const cells = new Map<string, Map<string, number | null>>();
  const columns: string[] = [];
  if (spec.columns.length) for (const ck of colKeys) for (const t of spec.totals) columns.push(path(ck, t));
  for (const t of spec.totals) columns.push(spec.columns.length ? totalPath(t) : path([], t));

  const fill = (key: string, subset: Rec[]) => {
    const m = new Map<string, number | null>();
    if (spec.columns.length) {
      for (const ck of colKeys) {
        const inCol = subset.filter((r) => JSON.stringify(colKeyOf(r)) === JSON.stringify(ck));
        for (const t of spec.totals) m.set(path(ck, t), inCol.length ? aggregate(inCol, t) : null);
      }
    }
    for (const t of spec.totals) m.set(spec.columns.length ? totalPath(t) : path([], t), aggregate(subset, t));
    cells.set(key, m);
  };
  for (const rk of rowKeys)
    fill(
      rk.join(' | '),
      records.filter((r) => JSON.stringify(rowKeyOf(r)) === JSON.stringify(rk)),
    );
  fill('Total', records);
  return { cells, columns, rows: [...rowKeys.map((k) => k.join(' | ')), 'Total'] };
}

import type { FieldDef } from '@quarry/query-language';
import type { CrosstabGrid } from '@quarry/rpc';
import type { CrosstabSpec } from './crosstab-spec';

export const BLANK = '(blank)';

/** An axis value as the engine returns it: text, number, boolean or a day (YYYY-MM-DD), or null for blank. */
export type AxisValue = string | number | boolean | null;

/** One aggregated group: `kind` tells which totals it belongs to. */
export interface GroupRow {
  kind: 'cell' | 'rowTotal' | 'columnTotal' | 'grand';
  rowKey: AxisValue[];
  columnKey: AxisValue[];
  values: Array<number | null>;
}

export type { CrosstabGrid };

/** Locale-free number text without float noise (12 significant digits at most). */
export function formatNumber(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return '';
  if (Number.isInteger(n)) return String(n);
  return String(Number(n.toPrecision(12)));
}

export function axisLabel(v: AxisValue): string {
  if (v === null || v === '') return BLANK;
  if (typeof v === 'number') return formatNumber(v);
  return String(v);
}

function compareValues(a: AxisValue, b: AxisValue, type: FieldDef['type']): number {
  const blankA = a === null || a === '';
  const blankB = b === null || b === '';
  if (blankA || blankB) return blankA === blankB ? 0 : blankA ? 1 : -1;
  if (type === 'integer' || type === 'number') return (a as number) - (b as number);
  if (type === 'boolean') return Number(a) - Number(b);
  const x = String(a).toLowerCase();
  const y = String(b).toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/** Orders keys level by level; `reverse` flips a level but keeps (blank) last. */
function sortKeys(keys: AxisValue[][], levels: Array<{ type: FieldDef['type']; reverse: boolean }>): AxisValue[][] {
  return [...keys].sort((a, b) => {
    for (let i = 0; i < levels.length; i++) {
      const blankA = a[i] === null || a[i] === '';
      const blankB = b[i] === null || b[i] === '';
      if (blankA !== blankB) return blankA ? 1 : -1;
      const c = compareValues(a[i], b[i], levels[i].type);
      if (c !== 0) return levels[i].reverse ? -c : c;
    }
    return 0;
  });
}

const keyOf = (k: AxisValue[]) => JSON.stringify(k.map((v) => (v === '' ? null : v)));
const round = (v: number | null) => (v === null ? null : Number.isInteger(v) ? v : Number(v.toPrecision(12)));

/** Assembles the grid from the engine's grouped rows. */
export function buildGrid(spec: CrosstabSpec, groups: GroupRow[]): CrosstabGrid {
  const rowKeys = new Map<string, AxisValue[]>();
  const colKeys = new Map<string, AxisValue[]>();
  const cells = new Map<string, Array<number | null>>();
  const rowTotals = new Map<string, Array<number | null>>();
  const colTotals = new Map<string, Array<number | null>>();
  let grand: Array<number | null> = spec.totals.map(() => null);
  for (const g of groups) {
    const values = g.values.map(round);
    const rk = keyOf(g.rowKey);
    const ck = keyOf(g.columnKey);
    if (g.kind === 'cell') {
      rowKeys.set(rk, g.rowKey);
      colKeys.set(ck, g.columnKey);
      cells.set(`${rk}|${ck}`, values);
    } else if (g.kind === 'rowTotal') rowTotals.set(rk, values);
    else if (g.kind === 'columnTotal') colTotals.set(ck, values);
    else grand = values;
  }
  const rows = sortKeys([...rowKeys.values()], spec.rows.map((f) => ({ type: f.type, reverse: false })));
  const columns = spec.columns.length ? sortKeys([...colKeys.values()], spec.columns.map((c) => ({ type: c.field.type, reverse: c.reverse }))) : [[]];
  const empty = spec.totals.map(() => null);
  const rowText = rows.map(keyOf);
  const colText = columns.map(keyOf);
  return {
    rowFields: spec.rows.map((f) => f.name),
    columnFields: spec.columns.map((c) => c.field.name),
    totals: spec.totals.map((t) => t.name),
    rows: rows.map((r) => r.map(axisLabel)),
    columns: columns.map((c) => c.map(axisLabel)),
    cells: rowText.map((r) => colText.map((c) => cells.get(`${r}|${c}`) ?? empty)),
    rowTotals: rowText.map((r) => rowTotals.get(r) ?? empty),
    columnTotals: colText.map((c) => (spec.columns.length ? colTotals.get(c) ?? empty : grand)),
    grandTotals: grand,
  };
}

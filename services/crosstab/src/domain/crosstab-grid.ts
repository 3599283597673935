import type { CrosstabGrid } from '@quarry/rpc';
import type { ShowAs } from './crosstab-spec';
import type { PivotTable } from './pivot-table';

export const BLANK = '(blank)';

/** An axis value as the engine returns it: text, number, boolean or a day (YYYY-MM-DD), or null for blank. */
export type AxisValue = string | number | boolean | null;

/**
 * One aggregated group. How long its keys are says what it is: the full row and column keys are a cell,
 * an empty column key the Total column, an empty row key the Total row, shorter keys a subtotal.
 */
export interface GroupRow {
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

const SHOWN_AS: Record<ShowAs, string> = {
  value: '',
  percentOfGrandTotal: ' (% of grand total)',
  percentOfRowTotal: ' (% of row total)',
  percentOfColumnTotal: ' (% of column total)',
};

/**
 * The grid the chart service draws: the table's rows and columns as labels (subtotals are not drawn).
 * A measure shown as a percentage says so in its name, which the chart prints on its axis and legend.
 */
export function toChartGrid(table: PivotTable): CrosstabGrid {
  const { spec } = table;
  const columns = spec.columns.length ? table.columns : [[]];
  return {
    rowFields: spec.rows.map((f) => f.name),
    columnFields: spec.columns.map((c) => c.field.name),
    totals: spec.totals.map((t) => `${t.name}${SHOWN_AS[t.showAs]}`),
    rows: table.rows.map((r) => r.map(axisLabel)),
    columns: columns.map((c) => c.map(axisLabel)),
    cells: table.rows.map((r) => columns.map((c) => table.at(r, c))),
    rowTotals: table.rows.map((r) => table.at(r, [])),
    columnTotals: columns.map((c) => table.at([], c)),
    grandTotals: table.at([], []),
  };
}

import type { AxisValue } from './axis-value';
import type { PivotTable } from './pivot-table';

/** Keys as JSON values: blank text is null like a missing value. */
const jsonKey = (key: AxisValue[]) => key.map((v) => (v === '' ? null : v));

/**
 * The table as data (format json, docs/api.md CROSSTAB.EXECUTE): keys as JSON values, numbers as
 * numbers, empty cells null, percentages (showAs) as plain numbers; a subtotal's key is shorter than
 * the field list and its row says `subtotal: true`.
 */
export function renderJson(table: PivotTable): string {
  const { spec } = table;
  const R = spec.rows.length;
  return JSON.stringify({
    rowFields: spec.rows.map((f) => f.name),
    columnFields: spec.columns.map((c) => c.field.name),
    measures: spec.totals.map((t) => ({
      name: t.name,
      aggregationType: t.aggregation,
      ...(t.field ? { field: t.field.name } : {}),
      ...(t.dynamicView ? { dynamicView: t.dynamicView } : {}),
      showAs: t.showAs,
    })),
    columns: table.columns.map(jsonKey),
    rows: table.rows.map((key) => ({
      key: jsonKey(key),
      cells: table.columns.map((c) => table.at(key, c)),
      total: table.at(key, []),
      ...(key.length < R ? { subtotal: true } : {}),
    })),
    columnTotals: table.columns.map((c) => table.at([], c)),
    grandTotal: table.at([], []),
    rowsOmitted: table.rowsOmitted,
    columnsOmitted: table.columnsOmitted,
  });
}

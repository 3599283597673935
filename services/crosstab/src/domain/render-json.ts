import type { AxisValue } from './axis-value';
import { keyQuery } from './drill-query';
import { otherOf } from './other-key';
import type { PivotTable } from './pivot-table';
import { isPartialKey } from './period-compare';

const optionalQuery = (query: string | null) => (query === null ? {} : { query });

/** Keys as JSON values: blank text is null like a missing value; the Other key is [] (its row says `other`). */
const jsonKey = (key: AxisValue[]) => (otherOf(key) ? [] : key.map((v) => (v === '' ? null : v)));

/**
 * The table as data (format json, docs/api.md CROSSTAB.EXECUTE): keys as JSON values, numbers as
 * numbers, empty cells null, percentages (showAs) as plain numbers; a subtotal's key is shorter than
 * the field list and its row says `subtotal: true`.
 */
export function renderJson(table: PivotTable): string {
  const { spec } = table;
  const R = spec.rows.length;
  const last = table.columns[table.columns.length - 1];
  const otherColumn = last && otherOf(last);
  return JSON.stringify({
    rowFields: spec.rows.map((a) => a.name),
    columnFields: spec.columns.map((a) => a.name),
    measures: spec.totals.map((t) => ({
      name: t.name,
      ...(t.aggregation ? { aggregationType: t.aggregation } : {}),
      ...(t.field ? { field: t.field.name } : {}),
      ...(t.distinctOf && !t.dynamicView ? { field: t.distinctOf.name } : {}),
      ...(t.dynamicView ? { dynamicView: t.dynamicView } : {}),
      ...(t.percentile !== undefined ? { percentile: t.percentile } : {}),
      ...(t.formula ? { formula: t.formula.text } : {}),
      showAs: t.showAs,
      ...t.look,
      ...(t.compare ? { compare: t.compare } : {}),
    })),
    columns: table.columns.map(jsonKey),
    columnQueries: table.columns.map((c) => keyQuery(spec.columns, c, table.drill)),
    rows: table.rows.map((key) => ({
      key: jsonKey(key),
      ...optionalQuery(keyQuery(spec.rows, key, table.drill)),
      cells: table.columns.map((c) => table.at(key, c)),
      total: table.at(key, []),
      ...(key.length < R && !otherOf(key) ? { subtotal: true } : {}),
      ...(otherOf(key) ? { other: otherOf(key)?.count } : {}),
      ...(isPartialKey(spec.rows, key) ? { partial: true } : {}),
    })),
    ...(otherColumn ? { otherColumn: otherColumn.count } : {}),
    columnTotals: table.columns.map((c) => table.at([], c)),
    grandTotal: table.at([], []),
    rowsOmitted: table.rowsOmitted,
    columnsOmitted: table.columnsOmitted,
    rowsFilteredOut: table.rowsFilteredOut,
    columnsFilteredOut: table.columnsFilteredOut,
    ...(spec.comparePartial ? { comparePartial: spec.comparePartial } : {}),
    ...(spec.comparePartial?.on === 'columns'
      ? { partialColumns: table.columns.flatMap((c, i) => (isPartialKey(spec.columns, c) ? [i] : [])) }
      : {}),
  });
}

import { intlOptions, type CrosstabGrid } from '@quarry/contract';
import { axisText } from './axis-value';
import { displayOf } from './crosstab-spec';
import type { PivotTable } from './pivot-table';

/**
 * The grid the chart service draws: the table's rows and columns as labels (subtotals are not drawn).
 * A measure shown as a percentage says so in its name, which the chart prints on its axis and legend.
 */
export function toChartGrid(table: PivotTable): CrosstabGrid {
  const { spec } = table;
  const columns = spec.columns.length ? table.columns : [[]];
  return {
    rowFields: spec.rows.map((a) => a.name),
    columnFields: spec.columns.map((a) => a.name),
    totals: spec.totals.map((t) => displayOf(t).label),
    rows: table.rows.map((r) => r.map((v, i) => axisText(spec.rows[i], v))),
    columns: columns.map((c) => c.map((v, i) => axisText(spec.columns[i], v))),
    cells: table.rows.map((r) => columns.map((c) => table.at(r, c))),
    rowTotals: table.rows.map((r) => table.at(r, [])),
    columnTotals: columns.map((c) => table.at([], c)),
    grandTotals: table.at([], []),
    ...numberFormats(table),
  };
}

/** The totals' formats as charts apply them, when any total has one (a grid without them is unchanged). */
function numberFormats(table: PivotTable): Pick<CrosstabGrid, 'numberFormats'> {
  const { totals } = table.spec;
  if (!totals.some((t) => t.look?.format)) return {};
  return {
    numberFormats: totals.map((t) => {
      const format = t.look?.format;
      if (!format) return null;
      const percent = displayOf(t).percent;
      return { options: intlOptions(percent ? { ...format, style: 'percent' } : format), scale: percent ? 0.01 : 1 };
    }),
  };
}

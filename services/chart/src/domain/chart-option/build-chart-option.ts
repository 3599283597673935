import { AppError } from '@quarry/errors';
import type { ChartGrid } from '../chart-grid';
import type { ChartKind } from '../chart-types';
import { cartesian } from './cartesian';
import { heatmap } from './heatmap';
import { planTitle, type Option, type Series } from './layout';
import { radar } from './radar';
import { scatter } from './scatter';
import { sliced } from './sliced';
import { treemap } from './treemap';

export { palette } from './layout';
export { OTHER_SHARE } from './sliced';

export const MAX_CATEGORIES = 1000;
export const MAX_SERIES = 100;

/** Categories from the row axis; series from columns × totals (multi) or the first total's row totals. */
function seriesOf(grid: ChartGrid, kind: ChartKind): Series[] {
  if (!kind.multiSeries) return [{ name: grid.totals[0], measure: 0, data: grid.rowTotals.map((t) => t[0]) }];
  if (grid.columnFields.length === 0)
    return grid.totals.map((name, t) => ({ name, measure: t, data: grid.rowTotals.map((r) => r[t]) }));
  const out: Series[] = [];
  grid.totals.forEach((total, t) =>
    grid.columns.forEach((col, c) => {
      const label = col.join(' / ');
      // Two totals on two axes: one legend entry (and colour) per column, the axis telling the totals apart.
      const twoAxes = grid.totals.length === 2 && kind.family !== 'radar';
      out.push({
        name: grid.totals.length > 1 && !twoAxes ? `${label} · ${total}` : label,
        measure: t,
        data: grid.cells.map((row) => row[c][t]),
      });
    }),
  );
  return out;
}

/**
 * The ECharts option for a grid, planned for a still image of `width`×`height`: every box (title,
 * legend, axis labels and names) is measured (text-metrics) and given its room, so nothing is cut at an
 * edge or drawn over something else. Labels travel as data and are drawn on a canvas or as SVG text:
 * nothing here is ever interpreted as markup.
 */
export function buildChartOption(
  grid: ChartGrid,
  kind: ChartKind,
  width: number,
  height: number,
  subtitle: string,
): Option {
  const categories = grid.rows.map((r) => r.join(' / '));
  if (categories.length > MAX_CATEGORIES)
    throw AppError.invalid(
      `The chart would have ${categories.length} categories; the limit is ${MAX_CATEGORIES}. ` +
        `Use rowLimit: ${MAX_CATEGORIES} (with rowOrder to choose which) or narrow the query`,
    );
  if (grid.totals.length < kind.minMeasures)
    throw AppError.invalid(
      `chartType ${kind.name} needs at least ${kind.minMeasures} totals; ${grid.totals.length} given`,
    );
  const series = seriesOf(grid, kind);
  if (series.length > MAX_SERIES)
    throw AppError.invalid(`The chart would have ${series.length} series; the limit is ${MAX_SERIES}`);
  const title = planTitle(grid, kind, subtitle, width, height);
  switch (kind.family) {
    case 'pie':
    case 'doughnut':
    case 'funnel':
    case 'pyramid':
      return sliced(kind, categories, series[0], width, height, title);
    case 'treemap':
      return treemap(kind, categories, series[0], width, height, title);
    case 'heatmap':
      return heatmap(grid, kind, categories, width, height, title);
    case 'radar':
      return radar(kind, categories, series, width, height, title);
    case 'scatter':
      return scatter(grid, kind, width, height, title);
    default:
      return cartesian(grid, kind, categories, series, width, height, title);
  }
}

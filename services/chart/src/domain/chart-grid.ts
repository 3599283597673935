import type { CrosstabGrid } from '@quarry/contract';

/** The parts of the crosstab grid (see CrosstabGrid in @quarry/contract) that a chart draws from. */
export type ChartGrid = Pick<
  CrosstabGrid,
  'rowFields' | 'columnFields' | 'totals' | 'rows' | 'columns' | 'cells' | 'rowTotals' | 'numberFormats'
>;

export function parseGrid(json: string): ChartGrid {
  const g = JSON.parse(json) as Partial<ChartGrid>;
  for (const key of ['rowFields', 'columnFields', 'totals', 'rows', 'columns', 'cells', 'rowTotals'] as const) {
    if (!Array.isArray(g[key])) throw new Error(`grid has no ${key}`);
  }
  return g as ChartGrid;
}

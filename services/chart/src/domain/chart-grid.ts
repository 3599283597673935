/** The crosstab grid the crosstab service computes (its JSON form travels in RenderChartRequest). */
export interface ChartGrid {
  rowFields: string[];
  columnFields: string[];
  totals: string[];
  rows: string[][];
  columns: string[][];
  cells: Array<Array<Array<number | null>>>;
  rowTotals: Array<Array<number | null>>;
}

export function parseGrid(json: string): ChartGrid {
  const g = JSON.parse(json) as Partial<ChartGrid>;
  for (const key of ['rowFields', 'columnFields', 'totals', 'rows', 'columns', 'cells', 'rowTotals'] as const) {
    if (!Array.isArray(g[key])) throw new Error(`grid has no ${key}`);
  }
  return g as ChartGrid;
}

/**
 * The computed crosstab as it travels from the crosstab service to the chart service (JSON in the
 * CrosstabResponse content of output "grid" and RenderChartRequest.grid_json): part of the contract, like proto/.
 */
export interface CrosstabGrid {
  rowFields: string[];
  columnFields: string[];
  totals: string[];
  rows: string[][];
  columns: string[][];
  /** cells[row][column][total]; null where no record falls. */
  cells: Array<Array<Array<number | null>>>;
  rowTotals: Array<Array<number | null>>;
  columnTotals: Array<Array<number | null>>;
  grandTotals: Array<number | null>;
  /** Per total, how its numbers are written (its `format`); absent when no total has one, null for one without. */
  numberFormats?: Array<ChartNumberFormat | null>;
}

/**
 * A total's format as charts apply it: Intl options (en-US), and a factor applied first (0.01 for a
 * percentage out of 100 written in percent style).
 */
export interface ChartNumberFormat {
  options: Intl.NumberFormatOptions;
  scale: number;
}

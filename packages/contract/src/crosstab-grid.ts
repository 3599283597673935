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
}

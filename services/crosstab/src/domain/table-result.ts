import { AppError } from '@quarry/errors';
import type { CachedResult } from '@quarry/result-cache';
import type { DrillFacts } from '../ports/pivot-engine.port';
import type { GroupRow } from './axis-value';
import { toChartGrid } from './crosstab-grid';
import { MAX_CELLS, type CrosstabSpec } from './crosstab-spec';
import { buildPivotTable, type OuterCounts, type PivotTable } from './pivot-table';
import { renderCsv } from './render-csv';
import { renderHtml } from './render-html';
import { renderJson } from './render-json';
import { renderXlsx } from './render-xlsx';

/** "html", "json", "csv" and "xlsx" are the table's formats; "grid" is what the chart service draws from. */
export const CROSSTAB_OUTPUTS = ['html', 'json', 'csv', 'xlsx', 'grid'] as const;
export type CrosstabOutput = (typeof CROSSTAB_OUTPUTS)[number];

/**
 * Each output as text, the workbook as its bytes: the forms the result cache keeps and the wire carries,
 * so nothing is re-encoded before the gateway writes the answer.
 */
const RENDER: Record<CrosstabOutput, (table: PivotTable, index: string) => string | Promise<Uint8Array>> = {
  html: renderHtml,
  json: renderJson,
  csv: renderCsv,
  xlsx: renderXlsx,
  grid: (table) => JSON.stringify(toChartGrid(table)),
};

/** The media type of each output, as the API's results name them. */
export const CONTENT_TYPES: Record<CrosstabOutput, string> = {
  html: 'text/html',
  json: 'application/json',
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  grid: 'application/json',
};

/** What turns a pivot's groups into the table in one format: plain data, so it can cross to a thread. */
export interface TableJob {
  spec: CrosstabSpec;
  groups: GroupRow[];
  drill?: DrillFacts;
  /** The outer levels chosen before the pivot by rowLimit, columnLimit and the filters: their counts. */
  outer?: { rows?: OuterCounts; columns?: OuterCounts };
  output: CrosstabOutput;
  index: string;
}

export const subtotalsOverLimit = () =>
  AppError.invalid(
    `With subtotals the crosstab would have more than ${MAX_CELLS} cells (the limit). Filter the query, use fewer fields, or leave subtotals out.`,
  );

/** The pivot table built from its groups and rendered, with its counts (the result cache's form). */
export async function tableResult({ spec, groups, drill, outer, output, index }: TableJob): Promise<CachedResult> {
  const table = buildPivotTable(spec, groups, { drill, outer });
  // Without column fields the Total column is the table's one column.
  const columnCount = spec.columns.length ? table.columns.length : 1;
  // Subtotal rows and columns are shown cells too: the limit holds for the table as drawn.
  if (table.rows.length * columnCount * spec.totals.length > MAX_CELLS) throw subtotalsOverLimit();
  return {
    payload: await RENDER[output](table, index),
    counts: [
      table.rows.length,
      columnCount,
      table.rowsOmitted,
      table.columnsOmitted,
      table.rowsFilteredOut,
      table.columnsFilteredOut,
    ],
  };
}

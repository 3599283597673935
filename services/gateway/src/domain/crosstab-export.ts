import type { CrosstabJsonTable, ExportFormat } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import type { ExportStore } from '../ports/export-store.port';
import { RawJson } from '../ports/raw-json';
import type { Caller, RequestTrace } from '../ports/service-clients.port';
import { readParams } from './method-params';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';

/**
 * What an export's run does: writes the run's partial file and resolves with the rows written. `rows`
 * tells how far it got where the file being written cannot (a workbook is a compressed archive).
 */
export type Produce = (
  id: string,
  run: string,
  signal: AbortSignal,
  rows: (written: number) => void,
) => Promise<number>;

/** An export's run, and what following its file needs. */
export interface ExportPlan {
  produce: Produce;
  /** A Parquet file's columns: its rows are counted from its pages' values. */
  columns?: number;
}

/** The crosstab's own outputs: its CSV, XLSX and PDF tables, and its JSON table's rows as JSON Lines. */
const CROSSTAB_FORMAT = { csv: 'csv', xlsx: 'xlsx', jsonl: 'json', pdf: 'pdf' } as const;
const CHART_KEYS = ['chartType', 'chartTotals', 'imageFormat', 'width', 'height'] as const;

/**
 * A saved crosstab report's params for its export: the export's format says how it is written. A report
 * saved as a chart prints that chart as pdf; in every other format it exports its table.
 */
export function savedCrosstabForExport(saved: Record<string, unknown>, format: ExportFormat): Record<string, unknown> {
  const params = { ...saved };
  delete params.format;
  if (format === 'pdf' && typeof params.chartType === 'string') delete params.imageFormat;
  else for (const k of CHART_KEYS) delete params[k];
  return params;
}

/**
 * A crosstab's export, bounded by the crosstab's own limits: the table it renders, written as it answered
 * (a PDF as CROSSTAB.EXECUTE format pdf prints it, the chart with chartType). Everything a caller can get
 * wrong is refused here, before the export is recorded.
 */
export function planCrosstabExport(
  crosstab: RunCrosstabUseCase,
  store: ExportStore,
  caller: Caller,
  params: Record<string, unknown>,
  at: string | undefined,
  format: ExportFormat,
  trace: RequestTrace,
  /** QUARRY_EXPORT_MAX_ROWS: a table's rows count as a search's records do. */
  maxRows: number,
  asOfVersion?: number,
): Produce {
  const prefix = at ? `${at}.` : '';
  if (format === 'parquet')
    throw AppError.invalid('format: a crosstab is exported as csv, xlsx, jsonl (its cells) or pdf');
  if (params.format !== undefined || params.imageFormat !== undefined)
    throw AppError.invalid(
      `${prefix}${params.format !== undefined ? 'format' : 'imageFormat'}: the export's format says how the table is written; give neither format nor imageFormat`,
    );
  if (params.chartType !== undefined && format !== 'pdf')
    throw AppError.invalid(
      `${prefix}chartType: a chart is exported as pdf only; give format pdf, or leave chartType out for the table`,
    );
  const read = readParams('CROSSTAB.EXECUTE', { ...params, format: CROSSTAB_FORMAT[format] }, at);
  return async (id, run) => {
    const ran = await crosstab.run(caller, read, trace, { version: asOfVersion });
    const data = ran.data as { data: unknown; rowCount?: number };
    // Known only once the crosstab has answered (its rows are its keys): refused before a byte is written.
    const tableRows = data.rowCount ?? ran.tableRows;
    if (tableRows !== undefined && tableRows > maxRows)
      throw AppError.invalid(
        `the table has ${tableRows} rows, more than QUARRY_EXPORT_MAX_ROWS (${maxRows}); narrow the query or group the rows`,
      );
    if (format === 'jsonl') {
      // The crosstab service's JSON text, carried through the gateway unparsed.
      const raw = data.data;
      const table = JSON.parse(raw instanceof RawJson ? raw.text : JSON.stringify(raw)) as CrosstabJsonTable;
      const lines = function* () {
        for (const row of table.rows) yield `${JSON.stringify(row)}\n`;
        yield `${JSON.stringify({ key: null, columnTotals: table.columnTotals, grandTotal: table.grandTotal })}\n`;
      };
      await store.writePartial(id, run, lines());
      return table.rows.length;
    }
    const body = String(data.data);
    await store.writePartial(id, run, [format === 'xlsx' || format === 'pdf' ? Buffer.from(body, 'base64') : body]);
    // A printed chart answers no table: its rows are the table's it was drawn from.
    return data.rowCount ?? ran.tableRows ?? 0;
  };
}

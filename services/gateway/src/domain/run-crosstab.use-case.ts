import { PDF_MAX_CELLS, type CrosstabGrid } from '@quarry/contract';
import { AppError } from '@quarry/errors';
import {
  RawJson,
  type AxisOrderRequest,
  type Caller,
  type RequestTrace,
  type ServiceClients,
} from '../ports/service-clients.port';
import { provenanceOf, type Execution, type RunAt } from './execution';
import type { ReadParams, SentParams } from './method-params';

/** rowOrder / columnOrder with measure and direction filled in (absent stays absent). */
function orderWithDefaults(o: SentParams<'CROSSTAB.EXECUTE'>['rowOrder']): AxisOrderRequest | undefined {
  return o && { by: o.by, measure: o.measure ?? 0, direction: o.direction ?? 'asc' };
}

/** Present keys only: a saved report records what was asked, not a list of undefineds. */
function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Runs CROSSTAB.EXECUTE for a caller (the token's user, or a saved report's runner), on the current index
 * or on a kept earlier version of it: the pivot, then the chart when one is asked for. Scopes are the
 * caller's business: this runs what it is given with the caller's permissions and realms, nobody else's.
 */
export class RunCrosstabUseCase {
  constructor(private readonly services: ServiceClients) {}

  async run(
    caller: Caller,
    { sent: p, complete }: ReadParams<'CROSSTAB.EXECUTE'>,
    trace: RequestTrace,
    at: RunAt = {},
  ): Promise<Execution> {
    const nowMs = at.nowMs ?? Date.now();
    // chartType, imageFormat and their combination were checked by the contract, before the pivot runs.
    // The services get every default applied (the contract's); the saved report keeps what was sent.
    const output = complete.output;
    const ran = await this.services.pivot(
      caller,
      {
        ...complete,
        // A PDF prints the table the crosstab service draws as HTML.
        output: output.kind === 'chart' ? 'grid' : output.format === 'pdf' ? 'html' : output.format,
        bypassCache: !complete.cache,
        nowMs,
        verify: complete.verify,
        ...(at.version !== undefined ? { asOfVersion: at.version } : {}),
      },
      trace,
    );
    const { table, cache, indexVersion, servedBy } = ran;
    // For a chart too: the crosstab is what is cached, the image is drawn each time.
    let data: Record<string, unknown>;
    if (output.kind === 'chart') {
      data = {
        ...(await this.services.renderChart(
          caller,
          {
            grid: withTotals(table.body, output.chartTotals, complete.totals.length),
            chartType: output.chartType,
            width: output.width,
            height: output.height,
            title: complete.index,
            imageFormat: output.imageFormat,
          },
          trace,
        )),
      };
    } else {
      const omitted = {
        ...(p.rowLimit !== undefined || p.columnLimit !== undefined
          ? { rowsOmitted: table.rowsOmitted, columnsOmitted: table.columnsOmitted }
          : {}),
        ...(p.rowFilter !== undefined || p.columnFilter !== undefined
          ? { rowsFilteredOut: table.rowsFilteredOut, columnsFilteredOut: table.columnsFilteredOut }
          : {}),
      };
      const counts = { rowCount: table.rowCount, columnCount: table.columnCount };
      // The JSON table goes out as the service wrote it: never parsed and written again here.
      if (p.format === 'json') data = { contentType: table.contentType, data: new RawJson(table.body), ...counts };
      else if (p.format === 'pdf') {
        // Refused before Chromium spends its time on it.
        const cells = table.rowCount * table.columnCount * complete.totals.length;
        if (cells > PDF_MAX_CELLS)
          throw AppError.invalid(
            `format: a PDF holds at most ${PDF_MAX_CELLS} cells; this table has ${cells} (${table.rowCount} rows × ${table.columnCount} columns × ${complete.totals.length} totals). Narrow it with rowLimit or columnLimit, or ask for xlsx`,
          );
        const pdf = await this.services.printTable(
          caller,
          { html: table.body, title: complete.index, subtitle: complete.query },
          trace,
        );
        data = { contentType: 'application/pdf', data: pdf, ...counts, ...omitted };
      } else data = { contentType: table.contentType, data: table.body, ...counts, ...omitted };
    }
    // The saved params are the executable ones with their defaults filled in. `cache` is not one: it says
    // how to run one call, not what the report is, and a report must never pin itself to "no cache".
    // Each total as sent: the schema's strict object holds its own keys only, in its order.
    const totals = p.totals.map((t) => defined(t));
    const executable: Record<string, unknown> = {
      index: p.index,
      query: complete.query,
      rows: p.rows,
      columns: complete.columns,
      totals,
      ...defined({
        timeZone: p.timeZone,
        rowFilter: p.rowFilter,
        columnFilter: p.columnFilter,
        subtotals: p.subtotals,
        totalsOn: p.totalsOn,
        rowOrder: orderWithDefaults(p.rowOrder),
        columnOrder: orderWithDefaults(p.columnOrder),
        rowLimit: p.rowLimit,
        columnLimit: p.columnLimit,
        format: p.format,
      }),
      ...(output.kind === 'chart'
        ? {
            chartType: output.chartType,
            ...defined({ chartTotals: p.chartTotals }),
            width: output.width,
            height: output.height,
            // A printed chart is saved as format pdf (above), which takes no imageFormat.
            ...(output.imageFormat === 'pdf' ? {} : { imageFormat: output.imageFormat }),
          }
        : {}),
    };
    return {
      data,
      cache,
      indexVersion,
      index: p.index,
      executable,
      tableRows: table.rowCount,
      provenance: provenanceOf(p.index, ran),
      nowMs,
      ...(servedBy ? { servedBy } : {}),
      ...(ran.verify ? { verify: ran.verify } : {}),
    };
  }
}

/**
 * The grid with only the totals a chart draws, in the order drawn: the chart service draws every total
 * it is handed, so the choice is made once, here.
 */
function withTotals(gridJson: string, picked: readonly number[], totals: number): string {
  // Every total in order (the usual case) needs no second parse of a grid that may be large.
  if (picked.length === totals && picked.every((t, i) => t === i)) return gridJson;
  const grid = JSON.parse(gridJson) as CrosstabGrid;
  const pick = <T>(values: readonly T[]): T[] => picked.map((t) => values[t]);
  return JSON.stringify({
    ...grid,
    totals: pick(grid.totals),
    cells: grid.cells.map((row) => row.map(pick)),
    rowTotals: grid.rowTotals.map(pick),
    columnTotals: grid.columnTotals.map(pick),
    grandTotals: pick(grid.grandTotals),
    ...(grid.numberFormats ? { numberFormats: pick(grid.numberFormats) } : {}),
  } satisfies CrosstabGrid);
}

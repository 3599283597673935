import { AppError } from '@quarry/errors';
import type { Scope } from '@quarry/metadata-store';
import {
  type CacheStatus,
  completeCrosstabExecute,
  completeIndexesFind,
  completeQueriesExecute,
  completeReportsFind,
  crosstabExecuteParams,
  indexesFindParams,
  parseParams,
  queriesExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
} from '@quarry/contract';
import type { z } from 'zod';
import type { AxisOrderRequest, Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import { savesReports, scopeOf, type MethodName } from './method-catalogue';
import type { Principal } from './principal';

const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The params as the contract's schemas parsed them (z.output; the contract's *Params types are what is sent). */
type ParsedQueriesExecute = z.output<typeof queriesExecuteParams>;
type ParsedCrosstabExecute = z.output<typeof crosstabExecuteParams>;
type ParsedSaveReport = NonNullable<ParsedQueriesExecute['saveReport']>;

/** A method's result and what goes into `meta` beside the request id. */
export interface MethodResult {
  data: unknown;
  /** How the result cache answered, for the methods it serves (QUERIES.EXECUTE, CROSSTAB.EXECUTE). */
  cache?: CacheStatus;
}

function callerOf(p: Principal): Caller {
  return {
    userId: p.user.id,
    userName: p.user.name,
    admin: p.user.admin,
    indexes: p.user.indexes,
    realms: p.user.realms,
    scopes: [...p.scopes],
  };
}

/** rowOrder / columnOrder with measure and direction filled in (absent stays absent). */
function orderWithDefaults(o: ParsedCrosstabExecute['rowOrder']): AxisOrderRequest | undefined {
  return o && { by: o.by, measure: o.measure ?? 0, direction: o.direction ?? 'asc' };
}

function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.has(scope)) throw AppError.forbidden(`Token lacks the required scope "${scope}"`);
}

/** Present keys only: a saved report records what was asked, not a list of undefineds. */
function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * One JSON-RPC method call: scopes, then every param rule of the contract, and only then the services.
 * Saving is orchestrated here because it spans two services: the report is written only after the
 * execution succeeded.
 */
export class CallMethodUseCase {
  constructor(private readonly services: ServiceClients) {}

  async call(
    principal: Principal,
    method: MethodName,
    params: Record<string, unknown>,
    trace: RequestTrace,
  ): Promise<MethodResult> {
    requireScope(principal, scopeOf(method));
    if (savesReports(method) && params.saveReport !== undefined) requireScope(principal, 'reports:write');
    const caller = callerOf(principal);
    switch (method) {
      case 'QUERIES.EXECUTE':
        return this.searchIndex(caller, parseParams(queriesExecuteParams, params), trace);
      case 'INDEXES.FIND':
        return {
          data: await this.services.findIndexes(
            caller,
            completeIndexesFind(parseParams(indexesFindParams, params)),
            trace,
          ),
        };
      case 'CROSSTAB.EXECUTE':
        return this.runCrosstab(caller, parseParams(crosstabExecuteParams, params), trace);
      case 'REPORTS.FIND':
        return {
          data: await this.services.findReports(
            caller,
            completeReportsFind(parseParams(reportsFindParams, params)),
            trace,
          ),
        };
      case 'REPORTS.METADATA':
        return {
          data: await this.services.reportMetadata(caller, parseParams(reportsMetadataParams, params).guid, trace),
        };
    }
  }

  private async searchIndex(caller: Caller, p: ParsedQueriesExecute, trace: RequestTrace): Promise<MethodResult> {
    // The service gets every default applied (the contract's); the saved report keeps what was sent.
    const complete = completeQueriesExecute(p);
    const sort = (p.sort ?? []).map((s) => ({ field: s.field, direction: s.direction }));
    const { page, cache } = await this.services.search(
      caller,
      {
        index: complete.index,
        query: complete.query,
        page: complete.page,
        pageSize: complete.pageSize,
        sort: complete.sort,
        bypassCache: !complete.cache,
      },
      trace,
    );
    if (!p.saveReport) return { data: page, cache };
    // Without `cache`, as for a crosstab: it is not an executable param.
    const executable = {
      index: page.index,
      query: page.query,
      page: page.page,
      pageSize: page.pageSize,
      sort: sort.map((s) => ({ field: s.field, direction: (s.direction ?? 'asc').toLowerCase() })),
    };
    const report = await this.save(caller, p.saveReport, 'query', 'QUERIES.EXECUTE', page.index, executable, trace);
    return { data: { ...page, report }, cache };
  }

  private async runCrosstab(caller: Caller, p: ParsedCrosstabExecute, trace: RequestTrace): Promise<MethodResult> {
    // chartType, imageFormat and their combination were checked by the contract, before the pivot runs.
    // The services get every default applied (the contract's); the saved report keeps what was sent.
    const complete = completeCrosstabExecute(p);
    const output = complete.output;
    const rowOrder = orderWithDefaults(p.rowOrder);
    const columnOrder = orderWithDefaults(p.columnOrder);
    const columns = complete.columns;
    const totals = p.totals.map((t) =>
      defined({
        aggregationType: t.aggregationType,
        field: t.field,
        dynamicView: t.dynamicView,
        name: t.name,
        showAs: t.showAs,
        percentile: t.percentile,
        formula: t.formula,
      }),
    );
    const { table, cache } = await this.services.pivot(
      caller,
      {
        index: complete.index,
        query: complete.query,
        rows: complete.rows,
        columns: complete.columns,
        totals: complete.totals,
        timeZone: complete.timeZone,
        rowFilter: complete.rowFilter,
        columnFilter: complete.columnFilter,
        subtotals: complete.subtotals,
        rowOrder: complete.rowOrder,
        columnOrder: complete.columnOrder,
        rowLimit: complete.rowLimit,
        columnLimit: complete.columnLimit,
        output: output.kind === 'chart' ? 'grid' : output.format,
        bypassCache: !complete.cache,
      },
      trace,
    );
    // For a chart too: the crosstab is what is cached, the image is drawn each time.
    let data: Record<string, unknown>;
    if (output.kind === 'chart') {
      data = {
        ...(await this.services.renderChart(
          {
            grid: table.grid,
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
      if (p.format === 'json')
        data = { contentType: 'application/json', data: JSON.parse(table.body) as unknown, ...counts };
      else if (p.format === 'csv') data = { contentType: 'text/csv', data: table.body, ...counts, ...omitted };
      else if (p.format === 'xlsx') data = { contentType: XLSX_CONTENT_TYPE, data: table.body, ...counts, ...omitted };
      else data = { contentType: 'text/html', data: table.body, ...counts, ...omitted };
    }
    if (!p.saveReport) return { data, cache };
    // The saved params are the executable ones with their defaults filled in. `cache` is not one: it says
    // how to run one call, not what the report is, and a report must never pin itself to "no cache".
    const executable: Record<string, unknown> = {
      index: p.index,
      query: complete.query,
      rows: p.rows,
      columns,
      totals,
      ...defined({
        timeZone: p.timeZone,
        rowFilter: p.rowFilter,
        columnFilter: p.columnFilter,
        subtotals: p.subtotals,
        rowOrder,
        columnOrder,
        rowLimit: p.rowLimit,
        columnLimit: p.columnLimit,
        format: p.format,
      }),
      ...(output.kind === 'chart'
        ? { chartType: output.chartType, width: output.width, height: output.height, imageFormat: output.imageFormat }
        : {}),
    };
    const report = await this.save(caller, p.saveReport, 'crosstab', 'CROSSTAB.EXECUTE', p.index, executable, trace);
    return { data: { ...data, report }, cache };
  }

  private save(
    caller: Caller,
    save: ParsedSaveReport,
    type: 'query' | 'crosstab',
    method: MethodName,
    index: string,
    params: Record<string, unknown>,
    trace: RequestTrace,
  ): Promise<{ guid: string }> {
    return this.services.saveReport(
      caller,
      {
        name: save.name,
        description: save.description ?? '',
        folder: save.folder ?? '',
        shared: save.shared ?? false,
        type,
        index,
        method,
        params,
      },
      trace,
    );
  }
}

import { AppError } from '@quarry/errors';
import type { Scope } from '@quarry/metadata-store';
import {
  type CacheStatus,
  crosstabExecuteParams,
  DEFAULT_CHART_HEIGHT,
  DEFAULT_CHART_WIDTH,
  indexesFindParams,
  parseParams,
  queriesExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
} from '@quarry/contract';
import type { z } from 'zod';
import type {
  AxisOrderRequest,
  Caller,
  PivotRequest,
  RequestTrace,
  ServiceClients,
} from '../ports/service-clients.port';
import { savesReports, scopeOf, type MethodName } from './method-catalogue';
import type { Principal } from './principal';

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
        return { data: await this.services.findIndexes(caller, parseParams(indexesFindParams, params), trace) };
      case 'CROSSTAB.EXECUTE':
        return this.runCrosstab(caller, parseParams(crosstabExecuteParams, params), trace);
      case 'REPORTS.FIND':
        return { data: await this.services.findReports(caller, parseParams(reportsFindParams, params), trace) };
      case 'REPORTS.METADATA':
        return {
          data: await this.services.reportMetadata(caller, parseParams(reportsMetadataParams, params).guid, trace),
        };
    }
  }

  private async searchIndex(caller: Caller, p: ParsedQueriesExecute, trace: RequestTrace): Promise<MethodResult> {
    const sort = (p.sort ?? []).map((s) => ({ field: s.field, direction: s.direction }));
    const { page, cache } = await this.services.search(
      caller,
      {
        index: p.index,
        query: p.query ?? '',
        page: p.page,
        pageSize: p.pageSize,
        sort,
        bypassCache: p.cache === false,
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
    const chart = p.chartType !== undefined;
    // Defaults filled once: the service gets them, and a saved report keeps them.
    const rowOrder = orderWithDefaults(p.rowOrder);
    const columnOrder = orderWithDefaults(p.columnOrder);
    const columns = (p.columns ?? []).map((c) => ({ field: c.field, reverse: c.reverse ?? false }));
    const totals = p.totals.map((t) =>
      defined({
        aggregationType: t.aggregationType,
        field: t.field,
        dynamicView: t.dynamicView,
        name: t.name,
        showAs: t.showAs,
      }),
    );
    const { table, cache } = await this.services.pivot(
      caller,
      {
        index: p.index,
        query: p.query ?? '',
        rows: p.rows,
        columns,
        totals: totals as PivotRequest['totals'],
        subtotals: p.subtotals ?? false,
        rowOrder,
        columnOrder,
        rowLimit: p.rowLimit,
        columnLimit: p.columnLimit,
        output: chart ? 'grid' : (p.format ?? 'html'),
        bypassCache: p.cache === false,
      },
      trace,
    );
    // For a chart too: the crosstab is what is cached, the image is drawn each time.
    let data: Record<string, unknown>;
    if (p.chartType !== undefined) {
      const imageFormat = p.imageFormat === 'svg' ? 'svg' : 'png';
      data = {
        ...(await this.services.renderChart(
          {
            grid: table.grid,
            chartType: p.chartType,
            width: p.width ?? DEFAULT_CHART_WIDTH,
            height: p.height ?? DEFAULT_CHART_HEIGHT,
            title: p.index,
            imageFormat,
          },
          trace,
        )),
      };
    } else {
      const omitted =
        p.rowLimit !== undefined || p.columnLimit !== undefined
          ? { rowsOmitted: table.rowsOmitted, columnsOmitted: table.columnsOmitted }
          : {};
      const counts = { rowCount: table.rowCount, columnCount: table.columnCount };
      if (p.format === 'json')
        data = { contentType: 'application/json', data: JSON.parse(table.body) as unknown, ...counts };
      else if (p.format === 'csv') data = { contentType: 'text/csv', data: table.body, ...counts, ...omitted };
      else data = { contentType: 'text/html', data: table.body, ...counts, ...omitted };
    }
    if (!p.saveReport) return { data, cache };
    // The saved params are the executable ones with their defaults filled in. `cache` is not one: it says
    // how to run one call, not what the report is, and a report must never pin itself to "no cache".
    const executable: Record<string, unknown> = {
      index: p.index,
      query: p.query === undefined || p.query.trim() === '' ? '*' : p.query,
      rows: p.rows,
      columns,
      totals,
      ...defined({
        subtotals: p.subtotals,
        rowOrder,
        columnOrder,
        rowLimit: p.rowLimit,
        columnLimit: p.columnLimit,
        format: p.format,
      }),
      ...(p.chartType !== undefined
        ? {
            chartType: p.chartType,
            width: p.width ?? DEFAULT_CHART_WIDTH,
            height: p.height ?? DEFAULT_CHART_HEIGHT,
            imageFormat: p.imageFormat ?? 'png',
          }
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

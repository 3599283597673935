import { AppError } from '@quarry/errors';
import type { Scope } from '@quarry/metadata-store';
import type { pb } from '@quarry/rpc';
import {
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
import type { CallScope, ServiceClients } from '../ports/service-clients.port';
import { savesReports, scopeOf, type MethodName } from './method-catalogue';
import type { Principal } from './principal';

type QueriesExecuteParams = z.output<typeof queriesExecuteParams>;
type CrosstabExecuteParams = z.output<typeof crosstabExecuteParams>;
type SaveParams = NonNullable<QueriesExecuteParams['saveReport']>;

export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** A method's result and what goes into `meta` beside the request id. */
export interface MethodResult {
  data: unknown;
  /** How the result cache answered, for the methods it serves (QUERIES.EXECUTE, CROSSTAB.EXECUTE). */
  cache?: CacheStatus;
}

/** The service's word for it; anything else (an older service) says nothing rather than something wrong. */
function cacheStatus(value: string): CacheStatus | undefined {
  return value === 'hit' || value === 'miss' || value === 'bypass' ? value : undefined;
}

function toCaller(p: Principal): pb.Caller {
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
function orderWithDefaults(o: CrosstabExecuteParams['rowOrder']) {
  return o && { by: o.by, measure: o.measure ?? 0, direction: o.direction ?? 'asc' };
}

function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.has(scope)) throw AppError.forbidden(`Token lacks the required scope "${scope}"`);
}

/**
 * One JSON-RPC method call: scopes, params, then the services. Saving is orchestrated here because it
 * spans two services: the report is written only after the execution succeeded.
 */
export class CallMethodUseCase {
  constructor(private readonly services: ServiceClients) {}

  async execute(principal: Principal, method: MethodName, params: Record<string, unknown>, scope: CallScope): Promise<MethodResult> {
    requireScope(principal, scopeOf(method));
    if (savesReports(method) && params.saveReport !== undefined) requireScope(principal, 'reports:write');
    const caller = toCaller(principal);
    switch (method) {
      case 'QUERIES.EXECUTE':
        return this.executeQuery(caller, parseParams(queriesExecuteParams, params), scope);
      case 'INDEXES.FIND':
        return { data: await this.findIndexes(caller, parseParams(indexesFindParams, params), scope) };
      case 'CROSSTAB.EXECUTE':
        return this.executeCrosstab(caller, parseParams(crosstabExecuteParams, params), scope);
      case 'REPORTS.FIND':
        return { data: await this.findReports(caller, parseParams(reportsFindParams, params), scope) };
      case 'REPORTS.METADATA':
        return { data: await this.reportMetadata(caller, parseParams(reportsMetadataParams, params), scope) };
    }
  }

  private async executeQuery(caller: pb.Caller, p: QueriesExecuteParams, scope: CallScope): Promise<MethodResult> {
    const res = await this.services.executeQuery(
      {
        caller,
        index: p.index,
        query: p.query ?? '',
        page: p.page ?? 0,
        hasPage: p.page !== undefined,
        pageSize: p.pageSize ?? 0,
        hasPageSize: p.pageSize !== undefined,
        sort: (p.sort ?? []).map((s) => ({ field: s.field, direction: s.direction ?? '' })),
        bypassCache: p.cache === false,
      },
      scope,
    );
    const cache = cacheStatus(res.cache);
    const data = {
      index: res.index,
      query: res.query,
      page: res.page,
      pageSize: res.pageSize,
      total: res.total,
      totalPages: res.totalPages,
      fields: res.fields.map((f) => ({ name: f.name, type: f.type })),
      records: JSON.parse(res.recordsJson) as unknown[],
    };
    if (!p.saveReport) return { data, cache };
    // Without `cache`, as for a crosstab: it is not an executable param.
    const executable = {
      index: res.index,
      query: res.query,
      page: res.page,
      pageSize: res.pageSize,
      sort: (p.sort ?? []).map((s) => ({ field: s.field, direction: (s.direction ?? 'asc').toLowerCase() })),
    };
    const report = await this.save(caller, p.saveReport, 'query', 'QUERIES.EXECUTE', res.index, executable, scope);
    return { data: { ...data, report }, cache };
  }

  private async findIndexes(caller: pb.Caller, p: { searchText?: string; cursor?: string; limit?: number }, scope: CallScope) {
    const res = await this.services.findIndexes(
      { caller, searchText: p.searchText ?? '', cursor: p.cursor ?? '', limit: p.limit ?? 0 },
      scope,
    );
    return {
      indexes: res.indexes.map((i) => ({
        name: i.name,
        description: i.description,
        recordCount: i.recordCount,
        fields: i.fields.map((f) => ({ name: f.name, type: f.type })),
        dynamicViews: i.dynamicViews,
        updatedAt: i.updatedAt,
      })),
      nextCursor: res.nextCursor === '' ? null : res.nextCursor,
    };
  }

  private async executeCrosstab(caller: pb.Caller, p: CrosstabExecuteParams, scope: CallScope): Promise<MethodResult> {
    // chartType, imageFormat and their combination are checked by the contract, before the pivot runs.
    const chart = p.chartType !== undefined;
    // Defaults filled once: the service gets them, and a saved report keeps them.
    const rowOrder = orderWithDefaults(p.rowOrder);
    const columnOrder = orderWithDefaults(p.columnOrder);
    const res = await this.services.executeCrosstab(
      {
        caller,
        index: p.index,
        query: p.query ?? '',
        rows: p.rows,
        columns: (p.columns ?? []).map((c) => ({ field: c.field, reverse: c.reverse ?? false })),
        totals: p.totals.map((t) => ({
          aggregationType: t.aggregationType,
          field: t.field ?? '',
          dynamicView: t.dynamicView ?? '',
          name: t.name ?? '',
          showAs: t.showAs ?? '',
        })),
        subtotals: p.subtotals ?? false,
        rowOrder: rowOrder ?? null,
        columnOrder: columnOrder ?? null,
        rowLimit: p.rowLimit ?? 0,
        columnLimit: p.columnLimit ?? 0,
        output: chart ? 'grid' : (p.format ?? 'html'),
        bypassCache: p.cache === false,
      },
      scope,
    );
    // For a chart too: the crosstab is what is cached, the image is drawn each time.
    const cache = cacheStatus(res.cache);
    let data: Record<string, unknown>;
    if (p.chartType !== undefined) {
      const png = await this.services.renderChart(
        { gridJson: res.gridJson, chartType: p.chartType, width: p.width ?? DEFAULT_CHART_WIDTH, height: p.height ?? DEFAULT_CHART_HEIGHT, title: p.index, imageFormat: p.imageFormat ?? 'png' },
        scope,
      );
      data =
        p.imageFormat === 'svg'
          ? { contentType: 'image/svg+xml', data: png.svg, width: png.width, height: png.height, chartType: png.chartType }
          : { contentType: 'image/png', data: png.pngBase64, width: png.width, height: png.height, chartType: png.chartType };
    } else {
      const omitted = p.rowLimit !== undefined || p.columnLimit !== undefined ? { rowsOmitted: res.rowsOmitted, columnsOmitted: res.columnsOmitted } : {};
      const counts = { rowCount: res.rowCount, columnCount: res.columnCount };
      if (p.format === 'json') data = { contentType: 'application/json', data: JSON.parse(res.data) as unknown, ...counts };
      else if (p.format === 'csv') data = { contentType: 'text/csv', data: res.data, ...counts, ...omitted };
      else data = { contentType: 'text/html', data: res.html, ...counts, ...omitted };
    }
    if (!p.saveReport) return { data, cache };
    // The saved params are the executable ones with their defaults filled in. `cache` is not one: it says
    // how to run one call, not what the report is, and a report must never pin itself to "no cache".
    const executable: Record<string, unknown> = {
      index: p.index,
      query: p.query === undefined || p.query.trim() === '' ? '*' : p.query,
      rows: p.rows,
      columns: (p.columns ?? []).map((c) => ({ field: c.field, reverse: c.reverse ?? false })),
      totals: p.totals.map((t) => ({
        aggregationType: t.aggregationType,
        ...(t.field !== undefined ? { field: t.field } : {}),
        ...(t.dynamicView !== undefined ? { dynamicView: t.dynamicView } : {}),
        ...(t.name !== undefined ? { name: t.name } : {}),
        ...(t.showAs !== undefined ? { showAs: t.showAs } : {}),
      })),
      ...(p.subtotals !== undefined ? { subtotals: p.subtotals } : {}),
      ...(rowOrder ? { rowOrder } : {}),
      ...(columnOrder ? { columnOrder } : {}),
      ...(p.rowLimit !== undefined ? { rowLimit: p.rowLimit } : {}),
      ...(p.columnLimit !== undefined ? { columnLimit: p.columnLimit } : {}),
      ...(p.format !== undefined ? { format: p.format } : {}),
      ...(p.chartType !== undefined ? { chartType: p.chartType, width: p.width ?? DEFAULT_CHART_WIDTH, height: p.height ?? DEFAULT_CHART_HEIGHT, imageFormat: p.imageFormat ?? 'png' } : {}),
    };
    const report = await this.save(caller, p.saveReport, 'crosstab', 'CROSSTAB.EXECUTE', p.index, executable, scope);
    return { data: { ...data, report }, cache };
  }

  private async findReports(caller: pb.Caller, p: { search?: string; types?: string[]; cursor?: string; limit?: number }, scope: CallScope) {
    const res = await this.services.findReports(
      { caller, search: p.search ?? '', types: p.types ?? [], cursor: p.cursor ?? '', limit: p.limit ?? 0 },
      scope,
    );
    return {
      reports: res.reports.map((r) => ({
        guid: r.guid,
        name: r.name,
        description: r.description,
        type: r.type,
        index: r.index,
        owner: r.owner,
        folder: r.folder,
        shared: r.shared,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      })),
      nextCursor: res.nextCursor === '' ? null : res.nextCursor,
    };
  }

  private async reportMetadata(caller: pb.Caller, p: { guid: string }, scope: CallScope) {
    const res = await this.services.getReportMetadata({ caller, guid: p.guid }, scope);
    return { ...res.report, method: res.method, params: JSON.parse(res.paramsJson) as unknown };
  }

  private async save(
    caller: pb.Caller,
    save: SaveParams,
    type: 'query' | 'crosstab',
    method: MethodName,
    index: string,
    executable: Record<string, unknown>,
    scope: CallScope,
  ): Promise<{ guid: string }> {
    const ref = await this.services.saveReport(
      {
        caller,
        save: { name: save.name, description: save.description ?? '', folder: save.folder ?? '', shared: save.shared ?? false },
        type,
        index,
        method,
        paramsJson: JSON.stringify(executable),
      },
      scope,
    );
    return { guid: ref.guid };
  }
}

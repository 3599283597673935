import { AppError } from '@quarry/errors';
import type { Scope } from '@quarry/metadata-store';
import {
  type CacheStatus,
  completeIndexesFind,
  completeReportsExecute,
  completeReportsFind,
  crosstabExecuteParams,
  indexesFindParams,
  parseParams,
  queriesExecuteParams,
  reportsDeleteParams,
  reportsExecuteParams,
  reportsFindParams,
  reportsMetadataParams,
  reportsUpdateParams,
} from '@quarry/contract';
import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import {
  ExecuteMethodUseCase,
  type Execution,
  type ParsedCrosstabExecute,
  type ParsedQueriesExecute,
} from './execute-method.use-case';
import { alsoNeededScope, savesReports, scopeOf, type MethodName } from './method-catalogue';
import { RunReportUseCase } from './run-report.use-case';
import { UpdateReportUseCase } from './update-report.use-case';
import type { Principal } from './principal';

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

function requireScope(p: Principal, scope: Scope): void {
  if (!p.scopes.has(scope)) throw AppError.forbidden(`Token lacks the required scope "${scope}"`);
}

/**
 * One JSON-RPC method call: scopes, then every param rule of the contract, and only then the services.
 * Saving is orchestrated here because it spans two services: the report is written only after the
 * execution succeeded.
 */
export class CallMethodUseCase {
  private readonly execute: ExecuteMethodUseCase;
  /** What scheduled deliveries run reports through too, with the schedule owner as the caller. */
  readonly runReport: RunReportUseCase;
  private readonly updateReport: UpdateReportUseCase;

  constructor(private readonly services: ServiceClients) {
    this.execute = new ExecuteMethodUseCase(services);
    this.runReport = new RunReportUseCase(services, this.execute);
    this.updateReport = new UpdateReportUseCase(services, this.execute);
  }

  async call(
    principal: Principal,
    method: MethodName,
    params: Record<string, unknown>,
    trace: RequestTrace,
  ): Promise<MethodResult> {
    requireScope(principal, scopeOf(method));
    if (savesReports(method) && params.saveReport !== undefined) requireScope(principal, 'reports:write');
    const alsoNeeds = alsoNeededScope(method);
    if (alsoNeeds) requireScope(principal, alsoNeeds);
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
      case 'REPORTS.METADATA': {
        const p = parseParams(reportsMetadataParams, params);
        return { data: await this.services.reportMetadata(caller, p, trace) };
      }
      case 'REPORTS.UPDATE':
        return { data: await this.updateReport.update(caller, parseParams(reportsUpdateParams, params), trace) };
      case 'REPORTS.DELETE':
        return {
          data: await this.services.deleteReport(caller, parseParams(reportsDeleteParams, params).guid, trace),
        };
      case 'REPORTS.EXECUTE': {
        const ran = await this.runReport.run(
          caller,
          completeReportsExecute(parseParams(reportsExecuteParams, params)),
          trace,
        );
        return { data: ran.data, cache: ran.cache };
      }
    }
  }

  private async searchIndex(caller: Caller, p: ParsedQueriesExecute, trace: RequestTrace): Promise<MethodResult> {
    const ran = await this.execute.query(caller, p, trace);
    if (!p.saveReport) return { data: ran.data, cache: ran.cache };
    const report = await this.save(caller, p.saveReport, 'query', 'QUERIES.EXECUTE', ran, trace);
    return { data: { ...ran.data, report }, cache: ran.cache };
  }

  private async runCrosstab(caller: Caller, p: ParsedCrosstabExecute, trace: RequestTrace): Promise<MethodResult> {
    const ran = await this.execute.crosstab(caller, p, trace);
    if (!p.saveReport) return { data: ran.data, cache: ran.cache };
    const report = await this.save(caller, p.saveReport, 'crosstab', 'CROSSTAB.EXECUTE', ran, trace);
    return { data: { ...ran.data, report }, cache: ran.cache };
  }

  private save(
    caller: Caller,
    save: ParsedSaveReport,
    type: 'query' | 'crosstab',
    method: MethodName,
    ran: Execution,
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
        index: ran.index,
        method,
        params: ran.executable,
        indexVersion: ran.indexVersion,
      },
      trace,
    );
  }
}

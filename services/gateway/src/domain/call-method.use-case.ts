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
  completeReportsSchedule,
  reportsScheduleParams,
  reportsSchedulesParams,
  reportsUnscheduleParams,
  reportsUpdateParams,
  tokensEmbedParams,
  tokensRevokeEmbedParams,
  type TokensEmbedResult,
  type TokensRevokeEmbedResult,
} from '@quarry/contract';
import type { z } from 'zod';
import type { EmbedSigner } from '../ports/embed-signer.port';
import type { Schedules, ScheduleOwner } from '../ports/schedules.port';
import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import { narrowToIndex } from './authenticate.use-case';
import type { EmbedTokenRegistry } from './embed-token-registry';
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
  /** For the audit trail: records (searches), cells (crosstab tables) or items (listings) returned. */
  returned?: number;
}

/** What a search or crosstab answer returned, as the audit trail counts it; nothing for a chart. */
function returnedOf(data: Record<string, unknown>): number | undefined {
  const n = (k: string) => (typeof data[k] === 'number' ? (data[k] as number) : undefined);
  const [total, page, pageSize] = [n('total'), n('page'), n('pageSize')];
  if (total !== undefined && page !== undefined && pageSize !== undefined)
    return Math.max(0, Math.min(pageSize, total - (page - 1) * pageSize));
  const [rows, columns] = [n('rowCount'), n('columnCount')];
  return rows !== undefined && columns !== undefined ? rows * columns : undefined;
}

function callerOf(p: Principal): Caller {
  return {
    userId: p.user.id,
    userName: p.user.name,
    admin: p.user.admin,
    indexes: p.user.indexes,
    realms: p.user.realms,
    scopes: [...p.scopes],
    ...(p.narrowing && p.narrowing.length > 0 ? { narrowing: p.narrowing } : {}),
  };
}

/** What an embed token may call: its one index's search and pivot, or its one report. */
const EMBED_INDEX_METHODS: readonly string[] = ['QUERIES.EXECUTE', 'CROSSTAB.EXECUTE'];
const EMBED_REPORT_METHODS: readonly string[] = ['REPORTS.EXECUTE'];

/**
 * Refuses (403) anything an embed token was not issued for, before any param is looked at by a service:
 * another method, another index or report, or saving (an embed token only reads).
 */
function checkEmbedGrant(p: Principal, method: MethodName, params: Record<string, unknown>): void {
  const grant = p.embed;
  if (!grant) return;
  if (grant.guid === undefined) {
    if (!EMBED_INDEX_METHODS.includes(method))
      throw AppError.forbidden(`An embed token for an index may only call ${EMBED_INDEX_METHODS.join(' and ')}`);
    if (params.index !== grant.index) throw AppError.forbidden(`This embed token may only read index "${grant.index}"`);
    if (params.saveReport !== undefined) throw AppError.forbidden('An embed token may not save reports');
    return;
  }
  if (!EMBED_REPORT_METHODS.includes(method))
    throw AppError.forbidden('An embed token for a report may only run that report (REPORTS.EXECUTE)');
  if (params.guid !== grant.guid)
    throw AppError.forbidden('This embed token may only run the report it was issued for');
}

function ownerOf(p: Principal): ScheduleOwner {
  return { userId: p.user.id, userName: p.user.name, tokenHash: p.tokenHash };
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
  private schedules: Schedules | undefined;
  private readonly execute: ExecuteMethodUseCase;
  /** What scheduled deliveries run reports through too, with the schedule owner as the caller. */
  readonly runReport: RunReportUseCase;
  private readonly updateReport: UpdateReportUseCase;

  constructor(
    private readonly services: ServiceClients,
    private readonly signer?: EmbedSigner,
    private readonly embedTokens?: EmbedTokenRegistry,
  ) {
    this.execute = new ExecuteMethodUseCase(services);
    this.runReport = new RunReportUseCase(services, this.execute);
    this.updateReport = new UpdateReportUseCase(services, this.execute);
  }

  /** Scheduled deliveries, once their module runs (it needs this use case to run reports). */
  useSchedules(schedules: Schedules | undefined): void {
    this.schedules = schedules;
  }

  private scheduler(): Schedules {
    if (!this.schedules)
      throw AppError.unavailable('Scheduled deliveries are not available: this gateway runs without Redis (REDIS_URL)');
    return this.schedules;
  }

  async call(
    principal: Principal,
    method: MethodName,
    params: Record<string, unknown>,
    trace: RequestTrace,
  ): Promise<MethodResult> {
    checkEmbedGrant(principal, method, params);
    requireScope(principal, scopeOf(method));
    if (savesReports(method) && params.saveReport !== undefined) requireScope(principal, 'reports:write');
    const alsoNeeds = alsoNeededScope(method);
    if (alsoNeeds) requireScope(principal, alsoNeeds);
    const caller = callerOf(principal);
    switch (method) {
      case 'QUERIES.EXECUTE':
        return this.searchIndex(caller, parseParams(queriesExecuteParams, params), trace);
      case 'INDEXES.FIND': {
        const data = await this.services.findIndexes(
          caller,
          completeIndexesFind(parseParams(indexesFindParams, params)),
          trace,
        );
        return { data, returned: data.indexes.length };
      }
      case 'CROSSTAB.EXECUTE':
        return this.runCrosstab(caller, parseParams(crosstabExecuteParams, params), trace);
      case 'REPORTS.FIND': {
        const data = await this.services.findReports(
          caller,
          completeReportsFind(parseParams(reportsFindParams, params)),
          trace,
        );
        return { data, returned: data.reports.length };
      }
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
        return { data: ran.data, cache: ran.cache, returned: returnedOf(ran.data) };
      }
      case 'REPORTS.SCHEDULE':
        return {
          data: await this.scheduler().schedule(
            ownerOf(principal),
            completeReportsSchedule(parseParams(reportsScheduleParams, params)),
          ),
        };
      case 'REPORTS.SCHEDULES':
        return {
          data: await this.scheduler().list(ownerOf(principal), parseParams(reportsSchedulesParams, params).guid),
        };
      case 'REPORTS.UNSCHEDULE':
        return {
          data: await this.scheduler().unschedule(
            ownerOf(principal),
            parseParams(reportsUnscheduleParams, params).scheduleId,
          ),
        };
      case 'TOKENS.EMBED':
        return { data: await this.issueEmbedToken(principal, parseParams(tokensEmbedParams, params), trace) };
      case 'TOKENS.REVOKE_EMBED':
        return { data: await this.revokeEmbedToken(principal, parseParams(tokensRevokeEmbedParams, params).id) };
    }
  }

  private async issueEmbedToken(
    principal: Principal,
    p: z.output<typeof tokensEmbedParams>,
    trace: RequestTrace,
  ): Promise<TokensEmbedResult> {
    const { signer, embedTokens } = this;
    if (!signer || !embedTokens) throw AppError.unavailable('Embed tokens are not enabled on this gateway');
    // What the embed token's bearer will need (REPORTS.EXECUTE runs a query too): the issuer must hold it.
    const needed: Scope[] = p.guid === undefined ? ['query:execute'] : ['reports:read', 'query:execute'];
    for (const scope of needed)
      if (!principal.scopes.has(scope))
        throw AppError.forbidden(`Token lacks the scope "${scope}" the embed token would need`);
    await embedTokens.checkRoom(principal.user.id);
    let index: string;
    if (p.guid !== undefined) {
      const report = await this.services.reportMetadata(callerOf(principal), { guid: p.guid }, trace);
      index = report.index;
      // Visible to the narrowed permissions the embed token will have, or the token would be useless.
      await this.services.reportMetadata(
        callerOf({ ...principal, user: narrowToIndex(principal.user, index) }),
        { guid: p.guid },
        trace,
      );
    } else {
      index = p.index!;
    }
    const narrowed = callerOf({ ...principal, user: narrowToIndex(principal.user, index) });
    // One record is enough to prove the index is readable (else 404) and the realm fits it (else 400).
    try {
      await this.services.search(
        narrowed,
        { index, query: p.realm ?? '*', page: 1, pageSize: 1, sort: [], bypassCache: false },
        trace,
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_ARGUMENT' && p.realm !== undefined)
        throw AppError.invalid(`realm: ${err.detail}`);
      throw err;
    }
    const { token, claims } = await signer.sign(
      {
        issuerTokenId: principal.tokenId,
        userId: principal.user.id,
        index,
        ...(p.guid === undefined ? {} : { guid: p.guid }),
        ...(p.realm === undefined ? {} : { realm: p.realm }),
      },
      p.ttlSeconds,
    );
    const expiresAt = new Date(claims.expiresAt * 1000).toISOString();
    // Recorded before it is handed out, so that whoever holds it can already be cut off by id.
    await embedTokens.record({ id: claims.id, userId: claims.userId, tokenId: claims.issuerTokenId, expiresAt });
    return { token, id: claims.id, expiresAt };
  }

  /** The caller's own user's embed tokens only: another user's id is as unknown as a made-up one. */
  private async revokeEmbedToken(principal: Principal, id: string): Promise<TokensRevokeEmbedResult> {
    if (!this.embedTokens) throw AppError.unavailable('Embed tokens are not enabled on this gateway');
    const record = await this.embedTokens.revoke(id, principal.user.id);
    return { id: record.id, revokedAt: record.revokedAt!, expiresAt: record.expiresAt };
  }

  private async searchIndex(caller: Caller, p: ParsedQueriesExecute, trace: RequestTrace): Promise<MethodResult> {
    const ran = await this.execute.query(caller, p, trace);
    const returned = returnedOf(ran.data);
    if (!p.saveReport) return { data: ran.data, cache: ran.cache, returned };
    const report = await this.save(caller, p.saveReport, 'query', 'QUERIES.EXECUTE', ran, trace);
    return { data: { ...ran.data, report }, cache: ran.cache, returned };
  }

  private async runCrosstab(caller: Caller, p: ParsedCrosstabExecute, trace: RequestTrace): Promise<MethodResult> {
    const ran = await this.execute.crosstab(caller, p, trace);
    const returned = returnedOf(ran.data);
    if (!p.saveReport) return { data: ran.data, cache: ran.cache, returned };
    const report = await this.save(caller, p.saveReport, 'crosstab', 'CROSSTAB.EXECUTE', ran, trace);
    return { data: { ...ran.data, report }, cache: ran.cache, returned };
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

import { AppError, quoteInput } from '@quarry/errors';
import type { ReportsUpdateResult } from '@quarry/contract';
import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import type { Execution } from './execution';
import { indexFields } from './index-fields';
import { declareParameters, PARAMETERS_KEY } from './report-parameters';
import { readParams, type SentParams } from './method-params';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';
import type { RunSearchUseCase } from './run-search.use-case';

/** Params that say how to run one call or what to save, never what a report is. */
const NOT_EXECUTABLE = ['saveReport', 'cache'] as const;

/**
 * REPORTS.UPDATE: the owner (or an admin) changes a report. New params are checked and run exactly as
 * a save checks and runs them, with the caller's permissions, and the reports service records them as the
 * next version, on the index version they ran on. Another user's report answers as an unknown guid.
 */
export class UpdateReportUseCase {
  constructor(
    private readonly services: ServiceClients,
    private readonly search: RunSearchUseCase,
    private readonly crosstab: RunCrosstabUseCase,
  ) {}

  async update(caller: Caller, p: SentParams<'REPORTS.UPDATE'>, trace: RequestTrace): Promise<ReportsUpdateResult> {
    let params: { json: string; index: string; indexVersion: number } | undefined;
    // New parameters make a new version as new params do: the current params run again to check them.
    if (p.params !== undefined || p.parameters !== undefined) {
      if (!caller.scopes.includes('query:execute'))
        throw AppError.forbidden('Token lacks the required scope "query:execute" (params are run to check them)');
      const current = await this.services.reportMetadata(caller, { guid: p.guid }, trace);
      // The reports service decides again by owner id; this spares running params for a report not the caller's.
      if (!caller.admin && current.owner !== caller.userName)
        throw AppError.notFound(`Report ${current.guid} not found`);
      const ran = await this.run(caller, current.method, current.index, p.params ?? current.params, trace);
      const parameters =
        p.parameters === undefined
          ? current.parameters
          : declareParameters(p.parameters, await indexFields(this.services, caller, ran.index, trace), 'parameters');
      const saved = parameters.length ? { ...ran.executable, [PARAMETERS_KEY]: parameters } : ran.executable;
      params = { json: JSON.stringify(saved), index: ran.index, indexVersion: ran.indexVersion };
    }
    return this.services.updateReport(
      caller,
      {
        guid: p.guid,
        ...(p.name !== undefined ? { name: p.name } : {}),
        ...(p.description !== undefined ? { description: p.description } : {}),
        ...(p.folder !== undefined ? { folder: p.folder } : {}),
        ...(p.shared !== undefined ? { shared: p.shared } : {}),
        ...(params ? { params } : {}),
      },
      trace,
    );
  }

  private run(
    caller: Caller,
    method: ReportsUpdateResult['method'],
    index: string,
    params: Record<string, unknown>,
    trace: RequestTrace,
  ): Promise<Execution> {
    const extra = NOT_EXECUTABLE.filter((k) => k in params);
    if (extra.length)
      throw AppError.invalid(`params.${extra[0]} is not an executable parameter: a report never keeps it`);
    if (params.index !== undefined && params.index !== index)
      throw AppError.invalid(
        `params.index: a report keeps its index (${quoteInput(index)}); save a new report for another one`,
      );
    const withIndex = { ...params, index };
    return method === 'QUERIES.EXECUTE'
      ? this.search.run(caller, readParams('QUERIES.EXECUTE', withIndex, 'params'), trace)
      : this.crosstab.run(caller, readParams('CROSSTAB.EXECUTE', withIndex, 'params'), trace);
  }
}

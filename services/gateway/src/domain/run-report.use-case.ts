import { AppError } from '@quarry/errors';
import type { CacheStatus, CompleteReportsExecute, ReportsMetadataResult } from '@quarry/contract';
import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import type { Execution } from './execution';
import { readParams } from './method-params';
import { applyParameters } from './report-parameters';
import type { RunCrosstabUseCase } from './run-crosstab.use-case';
import type { RunSearchUseCase } from './run-search.use-case';

/** REPORTS.EXECUTE's answer: the method's data, which report version ran, and on which index version. */
export interface ReportRun {
  data: Record<string, unknown> & { report: { guid: string; version: number }; indexVersion: number };
  cache?: CacheStatus;
  /** The rollup a crosstab report was answered from (meta.servedBy). */
  servedBy?: string;
  /** The report version that ran, as REPORTS.METADATA shows it. */
  metadata: ReportsMetadataResult;
  /** The search or crosstab it ran, and which (meta.provenance, meta.replay). */
  execution: Execution;
  runs: 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE';
}

/** Keys a run may not take from the saved params when the caller overrides the output. */
const CHART_KEYS = ['chartType', 'chartTotals', 'imageFormat', 'width', 'height'] as const;

/**
 * Runs a saved report for a caller, with that caller's own permissions and realms: who may see the
 * report is the reports service's rule (own, or shared on a readable index), and what the run reads is
 * the query and crosstab services' rule for this caller, so a shared report never lends its owner's
 * rights. REPORTS.EXECUTE calls it with the token's user; a scheduled delivery calls it with the
 * schedule owner as the store knows them at delivery time.
 */
export class RunReportUseCase {
  constructor(
    private readonly services: ServiceClients,
    private readonly search: RunSearchUseCase,
    private readonly crosstab: RunCrosstabUseCase,
  ) {}

  async run(caller: Caller, input: CompleteReportsExecute, trace: RequestTrace): Promise<ReportRun> {
    const metadata = await this.services.reportMetadata(
      caller,
      { guid: input.guid, ...(input.version !== undefined ? { version: input.version } : {}) },
      trace,
    );
    const asOfVersion = input.asOf === 'saved' ? this.savedOn(metadata) : undefined;
    const params = { ...metadata.params };
    // Values (given, else defaults) become literals ANDed with the saved query; no parameters, no change.
    const query = applyParameters(
      typeof params.query === 'string' ? params.query : undefined,
      metadata.parameters,
      input.parameters,
    );
    if (query !== undefined) params.query = query;
    if (metadata.method === 'QUERIES.EXECUTE') {
      if (input.format !== undefined || input.imageFormat !== undefined)
        throw AppError.invalid(
          `${input.format !== undefined ? 'format' : 'imageFormat'} goes with crosstab reports; this one is a query report (use page and pageSize)`,
        );
      if (input.page !== undefined) params.page = input.page;
      if (input.pageSize !== undefined) params.pageSize = input.pageSize;
      const ran = await this.search.run(caller, readParams('QUERIES.EXECUTE', params), trace, { version: asOfVersion });
      return this.answer(ran, metadata, 'QUERIES.EXECUTE');
    }
    if (input.page !== undefined || input.pageSize !== undefined)
      throw AppError.invalid(
        `${input.page !== undefined ? 'page' : 'pageSize'} goes with query reports; this one is a crosstab report (use format or imageFormat)`,
      );
    if (input.format !== undefined) {
      for (const k of CHART_KEYS) delete params[k];
      params.format = input.format;
    }
    if (input.imageFormat !== undefined) {
      if (params.chartType === undefined)
        throw AppError.invalid('imageFormat goes with chart reports; this crosstab report is a table (use format)');
      params.imageFormat = input.imageFormat;
    }
    const ran = await this.crosstab.run(caller, readParams('CROSSTAB.EXECUTE', params), trace, {
      version: asOfVersion,
    });
    return this.answer(ran, metadata, 'CROSSTAB.EXECUTE');
  }

  /** The index version the report version was saved on; a report saved before versions were kept has none. */
  private savedOn(metadata: ReportsMetadataResult): number {
    if (metadata.indexVersion > 0) return metadata.indexVersion;
    throw AppError.notFound(
      `Version ${metadata.version} of report ${metadata.guid} was saved before Quarry recorded index versions: it can only run with asOf "latest"`,
    );
  }

  private answer(ran: Execution, metadata: ReportsMetadataResult, runs: ReportRun['runs']): ReportRun {
    return {
      data: {
        ...ran.data,
        report: { guid: metadata.guid, version: metadata.version },
        indexVersion: ran.indexVersion,
      },
      ...(ran.cache ? { cache: ran.cache } : {}),
      ...(ran.servedBy ? { servedBy: ran.servedBy } : {}),
      metadata,
      execution: ran,
      runs,
    };
  }
}

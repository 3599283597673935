import type { MethodName } from '@quarry/contract';
import type { Caller, RequestTrace, ServiceClients } from '../../ports/service-clients.port';
import type { Execution } from '../execution';
import { indexFields } from '../index-fields';
import { declareParameters, PARAMETERS_KEY } from '../report-parameters';
import type { SentParams } from '../method-params';
import type { RunCrosstabUseCase } from '../run-crosstab.use-case';
import type { RunSearchUseCase } from '../run-search.use-case';
import { returnedOf, type MethodHandlers, type MethodResult } from './method-handler';

type SaveReport = NonNullable<SentParams<'QUERIES.EXECUTE'>['saveReport']>;

export interface ExecuteHandlerDeps {
  services: ServiceClients;
  search: RunSearchUseCase;
  crosstab: RunCrosstabUseCase;
}

/**
 * QUERIES.EXECUTE and CROSSTAB.EXECUTE, each saved as a report when saveReport asks for it. Saving spans
 * two services, so it is orchestrated here: the report is written only after the execution succeeded.
 */
export function executeHandlers(
  deps: ExecuteHandlerDeps,
): Pick<MethodHandlers, 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE'> {
  return {
    'QUERIES.EXECUTE': {
      handle: async ({ caller, sent, complete, trace }) => {
        const ran = await deps.search.run(caller, { sent, complete }, trace);
        return answer(deps.services, caller, sent.saveReport, 'query', 'QUERIES.EXECUTE', ran, trace);
      },
    },
    'CROSSTAB.EXECUTE': {
      handle: async ({ caller, sent, complete, trace }) => {
        const ran = await deps.crosstab.run(caller, { sent, complete }, trace);
        return answer(deps.services, caller, sent.saveReport, 'crosstab', 'CROSSTAB.EXECUTE', ran, trace);
      },
    },
  };
}

/** The execution's answer, with the saved report's guid when it was saved. */
async function answer(
  services: ServiceClients,
  caller: Caller,
  save: SaveReport | undefined,
  type: 'query' | 'crosstab',
  method: MethodName,
  ran: Execution,
  trace: RequestTrace,
): Promise<MethodResult> {
  const returned = returnedOf(ran.data);
  const servedBy = ran.servedBy ? { servedBy: ran.servedBy } : {};
  if (!save) return { data: ran.data, cache: ran.cache, returned, ...servedBy };
  const parameters = save.parameters?.length
    ? declareParameters(save.parameters, await indexFields(services, caller, ran.index, trace), 'saveReport.parameters')
    : undefined;
  const report = await services.saveReport(
    caller,
    {
      name: save.name,
      description: save.description ?? '',
      folder: save.folder ?? '',
      shared: save.shared ?? false,
      type,
      index: ran.index,
      method,
      params: parameters ? { ...ran.executable, [PARAMETERS_KEY]: parameters } : ran.executable,
      indexVersion: ran.indexVersion,
    },
    trace,
  );
  return { data: { ...ran.data, report }, cache: ran.cache, returned, ...servedBy };
}

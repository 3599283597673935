import { AppError } from '@quarry/errors';
import type { MethodName } from '@quarry/contract';
import type { Caller, RequestTrace, ServiceClients } from '../../ports/service-clients.port';
import type { Execution } from '../execution';
import { indexFields } from '../index-fields';
import { checkScopes } from '../method-access';
import { declareParameters, PARAMETERS_KEY } from '../report-parameters';
import { readParams, type SentParams } from '../method-params';
import type { Principal } from '../principal';
import type { ReplayClaim, ReplayTokens } from '../replay-tokens';
import type { RunCrosstabUseCase } from '../run-crosstab.use-case';
import type { RunSearchUseCase } from '../run-search.use-case';
import { returnedOf, type MethodHandlers, type MethodResult } from './method-handler';

type SaveReport = NonNullable<SentParams<'QUERIES.EXECUTE'>['saveReport']>;

export interface ExecuteHandlerDeps {
  services: ServiceClients;
  search: RunSearchUseCase;
  crosstab: RunCrosstabUseCase;
  /** Signs meta.replay and opens QUERIES.REPLAY's tokens; absent, answers carry none and replays answer 503. */
  replays?: ReplayTokens;
}

/**
 * What an execution's answer carries beside its data: how the cache answered, the rollup, which data gave
 * it (meta.provenance), a token to replay it (none for an embed token, which may not replay) and, with
 * verify, what the recomputation found.
 */
export function executionResult(
  replays: ReplayTokens | undefined,
  principal: Principal,
  call: { method: ReplayClaim['method']; runs: ReplayClaim['runs'] },
  ran: Execution,
  data: Record<string, unknown>,
): MethodResult {
  const replay =
    replays && !principal.embed
      ? replays.sign({
          ...call,
          params: ran.executable,
          version: ran.indexVersion,
          userId: principal.user.id,
          nowMs: ran.nowMs,
        })
      : undefined;
  return {
    data,
    cache: ran.cache,
    returned: returnedOf(ran.data),
    provenance: ran.provenance,
    ...(ran.servedBy ? { servedBy: ran.servedBy } : {}),
    ...(replay ? { replay } : {}),
    ...(ran.verify ? { verify: ran.verify } : {}),
  };
}

const noReplays = () => AppError.unavailable('Replays are not available: this gateway has no signing key');

/**
 * QUERIES.EXECUTE and CROSSTAB.EXECUTE, each saved as a report when saveReport asks for it, and
 * QUERIES.REPLAY. Saving spans two services, so it is orchestrated here: the report is written only after
 * the execution succeeded.
 */
export function executeHandlers(
  deps: ExecuteHandlerDeps,
): Pick<MethodHandlers, 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE' | 'QUERIES.REPLAY'> {
  const answer = async (
    principal: Principal,
    caller: Caller,
    save: SaveReport | undefined,
    method: 'QUERIES.EXECUTE' | 'CROSSTAB.EXECUTE',
    ran: Execution,
    trace: RequestTrace,
  ): Promise<MethodResult> => {
    const report = save && (await saveExecution(deps.services, caller, save, method, ran, trace));
    return executionResult(
      deps.replays,
      principal,
      { method, runs: method },
      ran,
      report ? { ...ran.data, report } : ran.data,
    );
  };
  return {
    'QUERIES.EXECUTE': {
      handle: async ({ principal, caller, sent, complete, trace }) => {
        const ran = await deps.search.run(caller, { sent, complete }, trace);
        return answer(principal, caller, sent.saveReport, 'QUERIES.EXECUTE', ran, trace);
      },
    },
    'CROSSTAB.EXECUTE': {
      handle: async ({ principal, caller, sent, complete, trace }) => {
        const ran = await deps.crosstab.run(caller, { sent, complete }, trace);
        return answer(principal, caller, sent.saveReport, 'CROSSTAB.EXECUTE', ran, trace);
      },
    },
    'QUERIES.REPLAY': {
      checkAvailable: () => {
        if (!deps.replays) throw noReplays();
      },
      handle: async ({ principal, caller, complete, trace }) => {
        const { replays } = deps;
        if (!replays) throw noReplays();
        const claim = replays.open(complete.token);
        // Refused alike whoever holds the token: it is the user's, not the bearer's.
        if (claim.userId !== principal.user.id)
          throw AppError.forbidden('This replay token was issued to another user');
        checkScopes(principal, claim.method, {});
        const at = { version: claim.version, nowMs: claim.nowMs };
        const params = { ...claim.params, cache: complete.cache };
        const ran =
          claim.runs === 'QUERIES.EXECUTE'
            ? await deps.search.run(caller, readParams('QUERIES.EXECUTE', params, 'token'), trace, at)
            : await deps.crosstab.run(caller, readParams('CROSSTAB.EXECUTE', params, 'token'), trace, at);
        return executionResult(replays, principal, claim, ran, ran.data);
      },
    },
  };
}

/** The execution saved as a report: its guid. */
async function saveExecution(
  services: ServiceClients,
  caller: Caller,
  save: SaveReport,
  method: MethodName,
  ran: Execution,
  trace: RequestTrace,
): Promise<{ guid: string }> {
  const parameters = save.parameters?.length
    ? declareParameters(save.parameters, await indexFields(services, caller, ran.index, trace), 'saveReport.parameters')
    : undefined;
  return services.saveReport(
    caller,
    {
      name: save.name,
      description: save.description ?? '',
      folder: save.folder ?? '',
      shared: save.shared ?? false,
      type: method === 'QUERIES.EXECUTE' ? 'query' : 'crosstab',
      index: ran.index,
      method,
      params: parameters ? { ...ran.executable, [PARAMETERS_KEY]: parameters } : ran.executable,
      indexVersion: ran.indexVersion,
    },
    trace,
  );
}

import { METHOD_NAMES } from '@quarry/contract';
import type { EmbedSigner } from '../../ports/embed-signer.port';
import type { Schedules } from '../../ports/schedules.port';
import type { ServiceClients } from '../../ports/service-clients.port';
import type { SourceCalls } from '../../ports/sources.port';
import type { EmbedTokenRegistry } from '../embed-token-registry';
import type { ReplayTokens } from '../replay-tokens';
import type { ManageTokensUseCase } from '../manage-tokens.use-case';
import type { ManageUsersUseCase } from '../manage-users.use-case';
import { RunCrosstabUseCase } from '../run-crosstab.use-case';
import { RunReportUseCase } from '../run-report.use-case';
import { RunSearchUseCase } from '../run-search.use-case';
import { UpdateReportUseCase } from '../update-report.use-case';
import { executeHandlers } from './execute.handlers';
import { exportsHandlers, type ExportsHandlerDeps } from './exports.handlers';
import { indexesHandlers } from './indexes.handlers';
import type { MethodHandlers } from './method-handler';
import { reportsHandlers } from './reports.handlers';
import { schedulesHandlers } from './schedules.handlers';
import { sourcesHandlers } from './sources.handlers';
import { tokensHandlers } from './tokens.handlers';
import { usersHandlers } from './users.handlers';

export interface MethodHandlerDeps extends ExportsHandlerDeps {
  services: ServiceClients;
  /** SOURCES.*, answered by the ingest service; absent, those methods answer 503. */
  sources?: SourceCalls;
  /** Embed tokens (TOKENS.EMBED, TOKENS.REVOKE_EMBED): both, or those methods answer 503. */
  signer?: EmbedSigner;
  embedTokens?: EmbedTokenRegistry;
  /** Scheduled deliveries, once their module runs; absent, REPORTS.SCHEDULE and its kin answer 503. */
  schedules?: () => Schedules | undefined;
  /** The admin API (USERS.*) and API tokens (TOKENS.CREATE and its kin), on the metadata store; absent: 503. */
  users?: ManageUsersUseCase;
  tokens?: ManageTokensUseCase;
  /** meta.replay and QUERIES.REPLAY; absent, answers carry no token and replays answer 503. */
  replays?: ReplayTokens;
}

/** Every method's handler, one per method of the contract, and the use cases they share. */
export function createMethodHandlers(deps: MethodHandlerDeps): MethodHandlers {
  const { services } = deps;
  const search = new RunSearchUseCase(services);
  const crosstab = new RunCrosstabUseCase(services);
  return {
    ...executeHandlers({ services, search, crosstab, replays: deps.replays }),
    ...indexesHandlers({ services }),
    ...reportsHandlers({
      services,
      runReport: new RunReportUseCase(services, search, crosstab),
      updateReport: new UpdateReportUseCase(services, search, crosstab),
      replays: deps.replays,
    }),
    ...schedulesHandlers({ schedules: deps.schedules ?? (() => undefined) }),
    ...tokensHandlers(deps),
    ...exportsHandlers(deps),
    ...sourcesHandlers({ sources: deps.sources }),
    ...usersHandlers({ users: deps.users }),
  };
}

/**
 * A start-up check for registries built at run time (a spread can hide a hole the types would have
 * named): every method of the contract has a handler, and nothing else does.
 */
export function checkEveryMethodHandled(handlers: Readonly<Record<string, unknown>>): void {
  const missing = METHOD_NAMES.filter(
    (m) => typeof (handlers[m] as { handle?: unknown } | undefined)?.handle !== 'function',
  );
  if (missing.length)
    throw new Error(`No handler for the contract's method${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  const unknown = Object.keys(handlers).filter((m) => !(METHOD_NAMES as readonly string[]).includes(m));
  if (unknown.length) throw new Error(`Handlers for methods the contract does not have: ${unknown.join(', ')}`);
}

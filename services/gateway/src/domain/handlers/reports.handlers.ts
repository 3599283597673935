import type { ServiceClients } from '../../ports/service-clients.port';
import type { ReplayTokens } from '../replay-tokens';
import type { RunReportUseCase } from '../run-report.use-case';
import type { UpdateReportUseCase } from '../update-report.use-case';
import { executionResult } from './execute.handlers';
import type { MethodHandlers } from './method-handler';

export interface ReportsHandlerDeps {
  services: ServiceClients;
  runReport: RunReportUseCase;
  updateReport: UpdateReportUseCase;
  replays?: ReplayTokens;
}

type ReportsMethods = 'REPORTS.FIND' | 'REPORTS.METADATA' | 'REPORTS.UPDATE' | 'REPORTS.DELETE' | 'REPORTS.EXECUTE';

/** The reports service's methods; running and updating a report span services, so use cases do them. */
export function reportsHandlers(deps: ReportsHandlerDeps): Pick<MethodHandlers, ReportsMethods> {
  const { services } = deps;
  return {
    'REPORTS.FIND': {
      handle: async ({ caller, complete, trace }) => {
        const data = await services.findReports(caller, complete, trace);
        return { data, returned: data.reports.length };
      },
    },
    'REPORTS.METADATA': {
      handle: async ({ caller, complete, trace }) => ({ data: await services.reportMetadata(caller, complete, trace) }),
    },
    'REPORTS.UPDATE': {
      handle: async ({ caller, sent, trace }) => ({ data: await deps.updateReport.update(caller, sent, trace) }),
    },
    'REPORTS.DELETE': {
      handle: async ({ caller, complete, trace }) => ({
        data: await services.deleteReport(caller, complete.guid, trace),
      }),
    },
    'REPORTS.EXECUTE': {
      handle: async ({ principal, caller, complete, trace }) => {
        // An embed token's fixed parameters join the ones its call set (the grant check refused any overlap).
        const fixed = principal.embed?.parameters;
        const input = fixed ? { ...complete, parameters: { ...complete.parameters, ...fixed } } : complete;
        const ran = await deps.runReport.run(caller, input, trace);
        return executionResult(
          deps.replays,
          principal,
          { method: 'REPORTS.EXECUTE', runs: ran.runs },
          ran.execution,
          ran.data,
        );
      },
    },
  };
}

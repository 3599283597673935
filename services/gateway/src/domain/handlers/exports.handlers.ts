import { AppError } from '@quarry/errors';
import type { ExportStatusUseCase } from '../export-status.use-case';
import type { StartExportUseCase } from '../start-export.use-case';
import type { MethodHandlers } from './method-handler';

export interface ExportsHandlerDeps {
  /** Absent: this gateway runs no exports and both methods answer 503. */
  exports?: { start: StartExportUseCase; status: ExportStatusUseCase };
}

/** EXPORTS.START and EXPORTS.STATUS. */
export function exportsHandlers(deps: ExportsHandlerDeps): Pick<MethodHandlers, 'EXPORTS.START' | 'EXPORTS.STATUS'> {
  const exportsOf = () => {
    if (!deps.exports) throw AppError.unavailable('Exports are not enabled on this gateway');
    return deps.exports;
  };
  return {
    'EXPORTS.START': {
      handle: async ({ principal, caller, sent, trace }) => {
        if (sent.method === 'REPORTS.EXECUTE' && !principal.scopes.has('reports:read'))
          throw AppError.forbidden('Token lacks the scope "reports:read" a report export needs');
        return { data: await exportsOf().start.start(caller, sent, trace) };
      },
    },
    'EXPORTS.STATUS': {
      handle: async ({ principal, sent }) => ({
        data: await exportsOf().status.status(principal.user.id, sent.exportId),
      }),
    },
  };
}

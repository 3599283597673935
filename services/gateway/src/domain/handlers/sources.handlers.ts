import { AppError } from '@quarry/errors';
import type { SourceCalls, SourceMethod } from '../../ports/sources.port';
import type { MethodHandler, MethodHandlers } from './method-handler';

/** SOURCES.*: framing and scopes here, everything else in the ingest service. */
export function sourcesHandlers(deps: { sources: SourceCalls | undefined }): Pick<MethodHandlers, SourceMethod> {
  const checkAvailable = () => {
    if (!deps.sources) throw AppError.unavailable('Sources are not available on this gateway (no ingest service)');
  };
  const pass = <M extends SourceMethod>(method: M): MethodHandler<M> => ({
    checkAvailable,
    handle: async ({ principal, caller, sent, trace }) => {
      checkAvailable();
      return { data: await deps.sources!.callSources(method, caller, principal.tokenHash, sent, trace) };
    },
  });
  return {
    'SOURCES.CREATE': pass('SOURCES.CREATE'),
    'SOURCES.FIND': pass('SOURCES.FIND'),
    'SOURCES.UPDATE': pass('SOURCES.UPDATE'),
    'SOURCES.DELETE': pass('SOURCES.DELETE'),
    'SOURCES.RUN': pass('SOURCES.RUN'),
    'SOURCES.RUNS': pass('SOURCES.RUNS'),
  };
}

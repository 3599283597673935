import type { ServiceClients } from '../../ports/service-clients.port';
import type { MethodHandlers } from './method-handler';

/** INDEXES.FIND: the query service lists what the caller may read. */
export function indexesHandlers(deps: { services: ServiceClients }): Pick<MethodHandlers, 'INDEXES.FIND'> {
  return {
    'INDEXES.FIND': {
      handle: async ({ caller, complete, trace }) => {
        const data = await deps.services.findIndexes(caller, complete, trace);
        return { data, returned: data.indexes.length };
      },
    },
  };
}

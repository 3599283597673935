import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import type { IndexField } from './report-parameters';

/**
 * The fields of an index as this caller sees them (realms may hide some), read off a search that matches
 * nothing: the query service names the fields with every page, and `NOT *:*` costs no scan of records.
 */
export async function indexFields(
  services: ServiceClients,
  caller: Caller,
  index: string,
  trace: RequestTrace,
): Promise<IndexField[]> {
  const { page } = await services.search(
    caller,
    { index, query: 'NOT *:*', page: 1, pageSize: 1, sort: [], bypassCache: false },
    trace,
  );
  return page.fields;
}

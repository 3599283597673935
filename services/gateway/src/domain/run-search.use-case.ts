import type { Caller, RequestTrace, ServiceClients } from '../ports/service-clients.port';
import { provenanceOf, type Execution, type RunAt } from './execution';
import type { ReadParams } from './method-params';

/**
 * Runs QUERIES.EXECUTE for a caller (the token's user, or a saved report's runner), on the current index
 * or on a kept earlier version of it. Scopes are the caller's business: this runs what it is given with
 * the caller's permissions and realms, nobody else's.
 */
export class RunSearchUseCase {
  constructor(private readonly services: ServiceClients) {}

  async run(
    caller: Caller,
    { sent: p, complete }: ReadParams<'QUERIES.EXECUTE'>,
    trace: RequestTrace,
    at: RunAt = {},
  ): Promise<Execution> {
    const nowMs = at.nowMs ?? Date.now();
    // The service gets every default applied (the contract's); the saved report keeps what was sent.
    const sort = (p.sort ?? []).map((s) => ({ field: s.field, direction: s.direction }));
    const ran = await this.services.search(
      caller,
      {
        index: complete.index,
        query: complete.query,
        page: complete.page,
        pageSize: complete.pageSize,
        sort: complete.sort,
        ...(complete.highlight ? { highlight: complete.highlight } : {}),
        ...(complete.facets ? { facets: complete.facets } : {}),
        bypassCache: !complete.cache,
        nowMs,
        ...(at.version !== undefined ? { asOfVersion: at.version } : {}),
      },
      trace,
    );
    const { page, cache, indexVersion } = ran;
    // Without `cache`, as for a crosstab: it is not an executable param.
    const executable = {
      index: page.index,
      query: page.query,
      page: page.page,
      pageSize: page.pageSize,
      sort: sort.map((s) => ({ field: s.field, direction: (s.direction ?? 'asc').toLowerCase() })),
      ...(p.highlight ? { highlight: p.highlight } : {}),
      ...(p.facets ? { facets: p.facets } : {}),
    };
    return {
      data: { ...page },
      cache,
      indexVersion,
      index: page.index,
      executable,
      provenance: provenanceOf(page.index, ran),
      nowMs,
    };
  }
}

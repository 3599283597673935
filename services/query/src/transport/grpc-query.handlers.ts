import type { Logger } from '@quarry/logger';
import type { Reader } from '@quarry/query-language';
import { unary, type HeavyCallLimiter, type pb } from '@quarry/rpc';
import type { ExecuteQueryUseCase } from '../domain/execute-query.use-case';
import type { FindIndexesUseCase } from '../domain/find-indexes.use-case';

export function readerOf(caller: pb.Caller__Output | null): Reader {
  return { admin: caller?.admin ?? false, indexes: caller?.indexes ?? [], realms: caller?.realms ?? [] };
}

export function queryHandlers(log: Logger, executeQuery: ExecuteQueryUseCase, findIndexes: FindIndexesUseCase, limiter: HeavyCallLimiter): pb.QueryServiceHandlers {
  return {
    ExecuteQuery: unary<pb.ExecuteQueryRequest__Output, pb.ExecuteQueryResponse>(log, 'ExecuteQuery', async (req, ctx) => {
      const out = await executeQuery.execute(
        readerOf(req.caller),
        {
          index: req.index,
          query: req.query,
          page: req.hasPage ? req.page : undefined,
          pageSize: req.hasPageSize ? req.pageSize : undefined,
          sort: req.sort.map((s) => ({ field: s.field, direction: s.direction })),
        },
        { signal: ctx.signal, cache: !req.bypassCache, heavy: (work) => limiter.run(ctx.signal, work) },
      );
      return { ...out, recordsJson: out.recordsJson };
    }),
    FindIndexes: unary<pb.FindIndexesRequest__Output, pb.FindIndexesResponse>(log, 'FindIndexes', async (req) => {
      const out = await findIndexes.execute(readerOf(req.caller), {
        searchText: req.searchText,
        cursor: req.cursor,
        limit: req.limit === 0 ? undefined : req.limit,
      });
      return { indexes: out.indexes, nextCursor: out.nextCursor ?? '' };
    }),
  };
}

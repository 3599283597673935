import { completeDirection, DEFAULT_PAGE, DEFAULT_PAGE_SIZE } from '@quarry/contract';
import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, type pb } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import type { ExecuteQueryUseCase } from '../domain/execute-query.use-case';
import type { FindIndexesUseCase } from '../domain/find-indexes.use-case';

export function queryHandlers(
  log: Logger,
  executeQuery: ExecuteQueryUseCase,
  findIndexes: FindIndexesUseCase,
  limiter: HeavyCallLimiter,
): pb.QueryServiceHandlers {
  return {
    ExecuteQuery: unary<pb.ExecuteQueryRequest__Output, pb.ExecuteQueryResponse>(
      log,
      'ExecuteQuery',
      async (req, ctx) => {
        const caller = callerFromWire(req.caller);
        const out = await executeQuery.searchIndex(
          caller,
          {
            index: req.index,
            query: req.query,
            // The gateway sends complete values; a peer from before that rule (a rolling update) is
            // completed with the contract's own defaults, never the service's.
            page: req.page ?? DEFAULT_PAGE,
            pageSize: req.pageSize ?? DEFAULT_PAGE_SIZE,
            sort: req.sort.map((s) => ({ field: s.field, direction: completeDirection(s.direction) })),
            ...(req.asOfVersion !== undefined ? { asOfVersion: req.asOfVersion } : {}),
          },
          {
            signal: ctx.signal,
            cache: !req.bypassCache,
            heavy: (work) => limiter.run(caller.userId, ctx.signal, work),
          },
        );
        return { ...out, recordsJson: out.recordsJson };
      },
    ),
    FindIndexes: unary<pb.FindIndexesRequest__Output, pb.FindIndexesResponse>(log, 'FindIndexes', async (req, ctx) => {
      const caller = callerFromWire(req.caller);
      const out = await findIndexes.find(
        caller,
        { searchText: req.searchText, cursor: req.cursor, limit: req.limit },
        // Only for indexes a realm restricts: a count over the realm, cached like a search.
        (reader, entry) =>
          executeQuery.countReadable(reader, entry, {
            signal: ctx.signal,
            heavy: (work) => limiter.run(caller.userId, ctx.signal, work),
          }),
      );
      return { indexes: out.indexes, nextCursor: out.nextCursor ?? '' };
    }),
  };
}

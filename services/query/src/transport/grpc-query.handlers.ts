import { indexesFindParamsCodec, searchParamsCodec } from '@quarry/contract';
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
): Omit<pb.QueryServiceHandlers, 'ExportSearch'> {
  return {
    ExecuteQuery: unary<pb.ExecuteQueryRequest__Output, pb.ExecuteQueryResponse>(
      log,
      'ExecuteQuery',
      async (req, ctx) => {
        const caller = callerFromWire(req.caller);
        // The params as the gateway's contract completed them, checked by the same schema: nothing is
        // filled in here.
        const out = await executeQuery.searchIndex(caller, searchParamsCodec.decode(req.paramsJson), {
          signal: ctx.signal,
          cache: !req.bypassCache,
          heavy: (work, signal) => limiter.run(caller.userId, signal ?? ctx.signal, work),
          ...(req.asOfVersion !== undefined ? { asOfVersion: req.asOfVersion } : {}),
          ...(req.nowMs !== undefined ? { now: req.nowMs } : {}),
        });
        const { scores, highlights, facets, ...rest } = out;
        const extras = {
          ...(scores ? { scores } : {}),
          ...(highlights ? { highlights } : {}),
          ...(facets ? { facets } : {}),
        };
        return { ...rest, extrasJson: Object.keys(extras).length ? JSON.stringify(extras) : '' };
      },
    ),
    FindIndexes: unary<pb.FindIndexesRequest__Output, pb.FindIndexesResponse>(log, 'FindIndexes', async (req, ctx) => {
      const caller = callerFromWire(req.caller);
      const out = await findIndexes.find(
        caller,
        indexesFindParamsCodec.decode(req.paramsJson),
        // Only for indexes a realm restricts: a count over the realm, cached like a search.
        (reader, entry) =>
          executeQuery.countReadable(reader, entry, {
            signal: ctx.signal,
            heavy: (work, signal) => limiter.run(caller.userId, signal ?? ctx.signal, work),
          }),
      );
      return { indexes: out.indexes, nextCursor: out.nextCursor ?? '' };
    }),
  };
}

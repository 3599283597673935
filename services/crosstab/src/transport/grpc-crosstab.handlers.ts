import { pivotParamsCodec } from '@quarry/contract';
import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, type pb } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import { AppError } from '@quarry/errors';
import { CROSSTAB_OUTPUTS, type RunCrosstabUseCase } from '../domain/run-crosstab.use-case';

export function crosstabHandlers(
  log: Logger,
  run: RunCrosstabUseCase,
  limiter: HeavyCallLimiter,
): pb.CrosstabServiceHandlers {
  return {
    ExecuteCrosstab: unary<pb.CrosstabRequest__Output, pb.CrosstabResponse>(
      log,
      'ExecuteCrosstab',
      async (req, ctx) => {
        const output = CROSSTAB_OUTPUTS.find((o) => o === req.output);
        if (!output) throw AppError.invalid(`output must be one of ${CROSSTAB_OUTPUTS.join(', ')}`);
        const caller = callerFromWire(req.caller);
        // The params as the gateway's contract completed them, checked by the same schema: nothing is
        // filled in here.
        const params = pivotParamsCodec.decode(req.paramsJson);
        const res = await run.run(caller, params, output, {
          signal: ctx.signal,
          cache: !req.bypassCache,
          heavy: (work, signal) => limiter.run(caller.userId, signal ?? ctx.signal, work),
          ...(req.asOfVersion !== undefined ? { asOfVersion: req.asOfVersion } : {}),
          ...(req.nowMs !== undefined ? { now: req.nowMs } : {}),
          verify: req.verify,
        });
        if (res.mismatches)
          ctx.log.warn(
            { index: params.index, verify: res.verify, first: res.mismatches },
            'verify: cells differ between the answer and its independent recomputation',
          );
        return {
          content: {
            contentType: res.contentType,
            body: typeof res.payload === 'string' ? Buffer.from(res.payload) : res.payload,
          },
          rowCount: res.rowCount,
          columnCount: res.columnCount,
          rowsOmitted: res.rowsOmitted,
          columnsOmitted: res.columnsOmitted,
          rowsFilteredOut: res.rowsFilteredOut,
          columnsFilteredOut: res.columnsFilteredOut,
          cache: res.cache,
          indexVersion: res.indexVersion,
          servedBy: res.servedBy ?? '',
          snapshotSha256: res.snapshotSha256,
          engine: res.engine,
          ...(res.verify ? { verify: res.verify } : {}),
        };
      },
    ),
  };
}

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
        const output = CROSSTAB_OUTPUTS.find((o) => o === (req.output === '' ? 'html' : req.output));
        if (!output) throw AppError.invalid(`output must be one of ${CROSSTAB_OUTPUTS.join(', ')}`);
        const res = await run.run(
          callerFromWire(req.caller),
          {
            index: req.index,
            query: req.query,
            rows: req.rows,
            columns: req.columns.map((c) => ({ field: c.field, reverse: c.reverse })),
            totals: req.totals.map((t) => ({
              aggregationType: t.aggregationType,
              field: t.field,
              dynamicView: t.dynamicView,
              name: t.name,
              showAs: t.showAs,
            })),
            subtotals: req.subtotals,
            rowOrder: req.rowOrder,
            columnOrder: req.columnOrder,
            rowLimit: req.rowLimit,
            columnLimit: req.columnLimit,
          },
          output,
          { signal: ctx.signal, cache: !req.bypassCache, heavy: (work) => limiter.run(ctx.signal, work) },
        );
        return {
          html: res.output === 'html' ? res.payload : '',
          gridJson: res.output === 'grid' ? res.payload : '',
          data: res.output === 'json' || res.output === 'csv' ? res.payload : '',
          rowCount: res.rowCount,
          columnCount: res.columnCount,
          rowsOmitted: res.rowsOmitted,
          columnsOmitted: res.columnsOmitted,
          cache: res.cache,
        };
      },
    ),
  };
}

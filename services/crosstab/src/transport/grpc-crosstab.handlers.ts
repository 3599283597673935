import type { Logger } from '@quarry/logger';
import { unary, type HeavyCallLimiter, type pb } from '@quarry/rpc';
import type { RunCrosstabUseCase } from '../domain/run-crosstab.use-case';

export function crosstabHandlers(log: Logger, run: RunCrosstabUseCase, limiter: HeavyCallLimiter): pb.CrosstabServiceHandlers {
  return {
    ExecuteCrosstab: unary<pb.CrosstabRequest__Output, pb.CrosstabResponse>(log, 'ExecuteCrosstab', async (req, ctx) => {
      const reader = { admin: req.caller?.admin ?? false, indexes: req.caller?.indexes ?? [], realms: req.caller?.realms ?? [] };
      const output = req.output === 'grid' ? 'grid' : 'html';
      const res = await run.execute(
        reader,
        {
          index: req.index,
          query: req.query,
          rows: req.rows,
          columns: req.columns.map((c) => ({ field: c.field, reverse: c.reverse })),
          totals: req.totals.map((t) => ({ aggregationType: t.aggregationType, field: t.field, dynamicView: t.dynamicView, name: t.name })),
        },
        output,
        { signal: ctx.signal, cache: !req.bypassCache, heavy: (work) => limiter.run(ctx.signal, work) },
      );
      return { html: res.html, rowCount: res.rowCount, columnCount: res.columnCount, gridJson: res.gridJson, cache: res.cache };
    }),
  };
}

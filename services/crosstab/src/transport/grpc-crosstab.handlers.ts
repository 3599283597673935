import {
  AGGREGATIONS,
  completeDirection,
  DEFAULT_AXIS_ORDER,
  DEFAULT_SHOW_AS,
  SHOW_AS,
  type CompleteAxisOrder,
} from '@quarry/contract';
import type { Logger } from '@quarry/logger';
import { callerFromWire, unary, wireWord, type pb } from '@quarry/rpc';
import type { HeavyCallLimiter } from '@quarry/runtime';
import { AppError } from '@quarry/errors';
import type { CrosstabRequestInput } from '../domain/crosstab-spec';
import { CROSSTAB_OUTPUTS, type RunCrosstabUseCase } from '../domain/run-crosstab.use-case';

const ORDER_BY = ['label', 'value'] as const;

/**
 * The wire's request as the domain takes it: complete. The gateway sends every value the contract
 * completed; what the wire cannot carry as absent (an empty string, an unset message) gets the
 * contract's own default, never one of this service's.
 */
export function crosstabInputFromWire(req: pb.CrosstabRequest__Output): CrosstabRequestInput {
  const order = (o: pb.AxisOrder__Output | null, param: string): CompleteAxisOrder => {
    if (!o || o.by === '') return DEFAULT_AXIS_ORDER;
    if (!Number.isInteger(o.measure) || o.measure < 0 || o.measure >= req.totals.length)
      throw AppError.invalid(`${param}.measure must be an index into totals, from 0 to ${req.totals.length - 1}`);
    return {
      by: wireWord(ORDER_BY, o.by, `${param}.by`),
      measure: o.measure,
      direction: completeDirection(o.direction),
    };
  };
  return {
    rows: req.rows,
    columns: req.columns.map((c) => ({ field: c.field, reverse: c.reverse })),
    totals: req.totals.map((t, i) => ({
      aggregationType: wireWord(AGGREGATIONS, t.aggregationType, `totals[${i}].aggregationType`),
      ...(t.field ? { field: t.field } : {}),
      ...(t.dynamicView ? { dynamicView: t.dynamicView } : {}),
      ...(t.name ? { name: t.name } : {}),
      showAs: t.showAs === '' ? DEFAULT_SHOW_AS : wireWord(SHOW_AS, t.showAs, `totals[${i}].showAs`),
    })),
    subtotals: req.subtotals,
    rowOrder: order(req.rowOrder, 'rowOrder'),
    columnOrder: order(req.columnOrder, 'columnOrder'),
    ...(req.rowLimit != null ? { rowLimit: req.rowLimit } : {}),
    ...(req.columnLimit != null ? { columnLimit: req.columnLimit } : {}),
  };
}

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
            ...crosstabInputFromWire(req),
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

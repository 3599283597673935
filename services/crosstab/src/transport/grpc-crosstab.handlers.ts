import {
  AGGREGATIONS,
  completeDirection,
  DEFAULT_AXIS_ORDER,
  DATE_GROUPS,
  DEFAULT_SHOW_AS,
  DEFAULT_TIME_ZONE,
  FILTER_OPS,
  SHOW_AS,
  TOTALS_ON,
  type CompleteAxis,
  type CompleteAxisOrder,
  type CompleteFilter,
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
  const axis = (c: pb.ColumnItem__Output, param: string): CompleteAxis => ({
    field: c.field,
    reverse: c.reverse,
    ...(c.dateGroup ? { dateGroup: wireWord(DATE_GROUPS, c.dateGroup, `${param}.dateGroup`) } : {}),
    ...(c.binWidth != null ? { bin: { width: c.binWidth, origin: c.binOrigin } } : {}),
  });
  const filter = (f: pb.AxisFilter__Output | null, param: string): CompleteFilter | undefined => {
    if (!f || f.op === '') return undefined;
    if (!Number.isInteger(f.measure) || f.measure < 0 || f.measure >= req.totals.length)
      throw AppError.invalid(`${param}.measure must be an index into totals, from 0 to ${req.totals.length - 1}`);
    return { measure: f.measure, op: wireWord(FILTER_OPS, f.op, `${param}.op`), value: f.value };
  };
  const rowFilter = filter(req.rowFilter, 'rowFilter');
  const columnFilter = filter(req.columnFilter, 'columnFilter');
  return {
    // A peer from before axes sends only `rows`, field names.
    rows: req.rowAxes.length
      ? req.rowAxes.map((r, i) => axis(r, `rows[${i}]`))
      : req.rows.map((field) => ({ field, reverse: false })),
    columns: req.columns.map((c, i) => axis(c, `columns[${i}]`)),
    totals: req.totals.map((t, i) => ({
      ...(t.formula
        ? { formula: t.formula }
        : { aggregationType: wireWord(AGGREGATIONS, t.aggregationType, `totals[${i}].aggregationType`) }),
      ...(t.field ? { field: t.field } : {}),
      ...(t.dynamicView ? { dynamicView: t.dynamicView } : {}),
      ...(t.name ? { name: t.name } : {}),
      ...(t.percentile != null ? { percentile: t.percentile } : {}),
      showAs: t.showAs === '' ? DEFAULT_SHOW_AS : wireWord(SHOW_AS, t.showAs, `totals[${i}].showAs`),
    })),
    timeZone: req.timeZone || DEFAULT_TIME_ZONE,
    ...(rowFilter ? { rowFilter } : {}),
    ...(columnFilter ? { columnFilter } : {}),
    subtotals: req.subtotals,
    totalsOn: req.totalsOn === '' ? 'columns' : wireWord(TOTALS_ON, req.totalsOn, 'totalsOn'),
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
        const caller = callerFromWire(req.caller);
        const res = await run.run(
          caller,
          {
            index: req.index,
            query: req.query,
            ...crosstabInputFromWire(req),
            ...(req.asOfVersion !== undefined ? { asOfVersion: req.asOfVersion } : {}),
          },
          output,
          {
            signal: ctx.signal,
            cache: !req.bypassCache,
            heavy: (work) => limiter.run(caller.userId, ctx.signal, work),
          },
        );
        return {
          html: res.output === 'html' ? res.payload : '',
          gridJson: res.output === 'grid' ? res.payload : '',
          data: res.output === 'json' || res.output === 'csv' ? res.payload : '',
          xlsx: res.output === 'xlsx' ? Buffer.from(res.payload, 'base64') : Buffer.alloc(0),
          rowCount: res.rowCount,
          columnCount: res.columnCount,
          rowsOmitted: res.rowsOmitted,
          columnsOmitted: res.columnsOmitted,
          rowsFilteredOut: res.rowsFilteredOut,
          columnsFilteredOut: res.columnsFilteredOut,
          cache: res.cache,
          indexVersion: res.indexVersion,
        };
      },
    ),
  };
}

import { createHash } from 'node:crypto';
import { AppError, quoteInput } from '@quarry/errors';
import {
  ALERT_ROWS_MAX,
  headerNamedTotals,
  resolveChartTotals,
  totalDisplayName,
  type AlertCondition,
  type AlertOutcome,
  type AlertRow,
  type DateGroup,
  type FilterOp,
  type ReportsMetadataResult,
} from '@quarry/contract';
import { applyParameters } from './report-parameters';

/*
 * Alerts on scheduled crosstab reports: the run's JSON table is tested against `when` (a row's total across
 * the columns, or the grand total) before anything is delivered.
 */

type Total = Parameters<typeof totalDisplayName>[0];

type SavedAxis = string | { field: string; dateGroup?: DateGroup };

/**
 * The report's totals as saved (a crosstab report always has them), as its header names them: a compared
 * total by its comparison, so `when.total` can name it.
 */
function totalsOf(report: ReportsMetadataResult): Total[] {
  const { totals, rows, columns } = report.params;
  if (!Array.isArray(totals)) return [];
  const axes = [...(Array.isArray(rows) ? rows : []), ...(Array.isArray(columns) ? columns : [])] as SavedAxis[];
  return headerNamedTotals(totals as Array<Parameters<typeof headerNamedTotals>[0][number]>, axes);
}

/** The index of the total `when` names, or a 400 naming when.total and the report's totals. */
export function alertTotal(report: ReportsMetadataResult, when: AlertCondition): number {
  if (report.method !== 'CROSSTAB.EXECUTE')
    throw AppError.invalid('when: an alert tests a total of a crosstab report; this one is a search report');
  const totals = totalsOf(report);
  const [at] = resolveChartTotals([when.total], totals);
  if (at >= 0) return at;
  const names = totals.map((t) => JSON.stringify(totalDisplayName(t))).join(', ');
  throw AppError.invalid(
    typeof when.total === 'number'
      ? `when.total must be an index into the report's totals, from 0 to ${totals.length - 1}`
      : `when.total ${quoteInput(when.total)} names no total of the report; its totals are ${names}`,
  );
}

const PASSES: Record<FilterOp, (a: number, b: number) => boolean> = {
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '=': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};

/** The JSON table's parts an alert reads. */
interface JsonTable {
  rows?: Array<{ key: unknown[]; query?: string; total: Array<number | null>; subtotal?: boolean }>;
  grandTotal?: Array<number | null>;
}

/** The record query of a row: the report's own query (its parameters at their defaults) AND the row's key. */
function drillQuery(reportQuery: string | undefined, rowQuery: string | undefined): string | null {
  if (rowQuery === undefined) return null;
  const q = reportQuery?.trim() ?? '';
  return q === '' || q === '*' ? rowQuery : `(${q}) AND ${rowQuery}`;
}

/**
 * The alert's outcome on a run's JSON table: on "anyRow" every innermost row (subtotals are sums of
 * those, not tested) whose total passes, on "grandTotal" the grand total. An empty cell never passes.
 */
export function evaluateAlert(report: ReportsMetadataResult, when: AlertCondition, table: JsonTable): AlertOutcome {
  const at = alertTotal(report, when);
  const passes = (v: number | null | undefined): v is number => typeof v === 'number' && PASSES[when.op](v, when.value);
  const grand = table.grandTotal?.[at] ?? null;
  const reportQuery = applyParameters(
    typeof report.params.query === 'string' ? report.params.query : undefined,
    report.parameters,
    undefined,
  );
  const matching: AlertRow[] = [];
  if (when.on === 'anyRow')
    for (const row of table.rows ?? []) {
      const value = row.total[at];
      if (!row.subtotal && passes(value))
        matching.push({ key: row.key, value, drillQuery: drillQuery(reportQuery, row.query) });
    }
  const holds = when.on === 'grandTotal' ? passes(grand) : matching.length > 0;
  const compared = when.on === 'grandTotal' ? grand : matching.map((r) => [r.key, r.value]);
  return {
    holds,
    total: totalDisplayName(totalsOf(report)[at]),
    op: when.op,
    value: when.value,
    on: when.on,
    rows: matching.slice(0, ALERT_ROWS_MAX),
    rowsOmitted: Math.max(0, matching.length - ALERT_ROWS_MAX),
    grandTotal: grand,
    digest: createHash('sha256').update(JSON.stringify(compared)).digest('hex'),
  };
}

import type { AlertOn, FilterOp } from './limits';

/** A schedule's alert with its default applied (REPORTS.SCHEDULE `when`). */
export interface AlertCondition {
  total: number | string;
  op: FilterOp;
  value: number;
  on: AlertOn;
  onlyOnChange: boolean;
}

/** A row whose total passed the condition, and the query that finds its records. */
export interface AlertRow {
  key: unknown[];
  value: number;
  /** The report's query (with its parameters' defaults) AND the row's key: QUERIES.EXECUTE finds its records. */
  drillQuery: string | null;
}

/** What a scheduled run found for its alert; the delivery carries it (webhook `alert`, e-mail text). */
export interface AlertOutcome {
  holds: boolean;
  /** The total tested, by its name. */
  total: string;
  op: FilterOp;
  value: number;
  on: AlertOn;
  /** With on "anyRow": the matching rows (at most ALERT_ROWS_MAX), in the table's order. */
  rows: AlertRow[];
  /** Matching rows past ALERT_ROWS_MAX, not listed. */
  rowsOmitted: number;
  grandTotal: number | null;
  /** Stands for the matching set (keys and values, or the grand total): onlyOnChange compares it. */
  digest: string;
}

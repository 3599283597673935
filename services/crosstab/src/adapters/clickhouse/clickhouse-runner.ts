import type { IndexEntry } from '@quarry/metadata-store';
import type { ClickHouseParam } from './compile-clickhouse';

export type ClickHouseRow = Record<string, unknown>;

/** Settings every statement of the pivot engine runs under (docs/scaling.md). */
export const PIVOT_SETTINGS: Readonly<Record<string, string | number>> = {
  // A rolled-up key of a grouping set is NULL, never the type's default ('' or 0, which are real keys).
  group_by_use_nulls: 1,
  // Timestamps are stored in UTC; each date function is given the crosstab's zone explicitly.
  session_timezone: 'UTC',
  // Date functions return Date32 / DateTime64, whose range is that of the data (Date stops at 2149).
  enable_extended_results_for_datetime_functions: 1,
  // 64-bit and 128-bit integers come as text, read into JS without rounding through a double first.
  output_format_json_quote_64bit_integers: 1,
  // GROUPING() is 1 for a rolled-up key, as in DuckDB and standard SQL.
  force_grouping_standard_compatibility: 1,
};

/** Where a version's records are read, and their ClickHouse column types by field name. */
export interface ClickHouseSource {
  from: string;
  columnTypes: ReadonlyMap<string, string>;
}

/** One way to reach ClickHouse: chDB in this process, or a server or cluster over HTTP. */
export interface ClickHouseRunner {
  /** Rows of one statement, its values bound as typed parameters; rejects with the abort reason when `signal` aborts. */
  rows(
    sql: string,
    params: Record<string, ClickHouseParam>,
    settings: Record<string, string | number>,
    signal?: AbortSignal,
  ): Promise<ClickHouseRow[]>;
  /** The table (or table function) of a published version. */
  source(entry: IndexEntry): Promise<ClickHouseSource>;
  /**
   * Every k-th record of a version where it is stored (its position in the Parquet file, or within each
   * part of a MergeTree table): a subset spread evenly over the version, as a table expression. `keep`
   * asks to keep it for the next calls where the runner can (a small subset, read again and again).
   */
  subset(entry: IndexEntry, every: number, keep: boolean): Promise<string>;
  /** Forgets what is kept of an index's versions (their column types, their kept subsets). */
  forget(name: string): void;
  close(): Promise<void>;
}

/** ClickHouse's error code of a message ("Code: 158. DB::Exception: ..."), if it has one. */
export function clickHouseErrorCode(err: unknown): number | undefined {
  const m = /Code: (\d+)\./.exec(err instanceof Error ? err.message : String(err));
  if (m) return Number(m[1]);
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : undefined;
}

/** TOO_MANY_ROWS: group_by_overflow_mode = 'throw' stopped a pivot past max_rows_to_group_by. */
export const TOO_MANY_ROWS = 158;

/** Settings as a SETTINGS clause (the adapter's own names and values only). */
export function settingsClause(settings: Record<string, string | number>): string {
  const items = Object.entries(settings).map(
    ([k, v]) => `${k} = ${typeof v === 'number' ? v : `'${v.replace(/'/g, "\\'")}'`}`,
  );
  return items.length ? ` SETTINGS ${items.join(', ')}` : '';
}

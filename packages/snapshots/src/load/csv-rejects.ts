import type { DuckDBConnection } from '@duckdb/node-api';
import { rows } from './duck-run';
import { findLines } from './record-lines';
import type { RejectLog } from './load-problems';

/** DuckDB's reject reasons in Quarry's words. */
function rejectReason(type: string, message: string, columns: number): string {
  const found = /Found: (\d+)/.exec(message)?.[1];
  switch (type) {
    case 'MISSING COLUMNS':
    case 'TOO MANY COLUMNS':
      return `the row has ${found === undefined ? (type === 'MISSING COLUMNS' ? 'fewer fields' : 'more fields') : found === '1' ? '1 field' : `${found} fields`} where the header has ${columns}`;
    case 'UNQUOTED VALUE':
      return /unterminated/i.test(message)
        ? 'a quoted value starts here and its closing quote never comes'
        : 'a quote inside an unquoted value (quote the value and double the quote: "")';
    case 'INVALID ENCODING':
    case 'INVALID UNICODE':
      return 'not valid UTF-8 (if the file is Latin-1, load it with --encoding latin1)';
    case 'LINE SIZE OVER MAXIMUM':
      return 'the line is longer than 8 MiB';
    default:
      return message.split('\n')[0].slice(0, 200);
  }
}

/**
 * The rows DuckDB's CSV reader stored as rejects, each added to `rejects` once in Quarry's words and
 * named by the line an editor shows. Returns how many lines an unterminated quote swallowed (never
 * read as rows), and the lines each rejected row took by DuckDB's line number (what findLines walks past).
 * `counted` hears how many rows were rejected before the first is added (which ends a strict load), so
 * the rows read are known even then.
 */
export async function collectCsvRejects(
  c: DuckDBConnection,
  file: string,
  rejects: RejectLog,
  csvColumns: number,
  counted?: (rejectedRows: number) => void,
): Promise<{ unreadLines: number; csvRejected: Map<number, number> }> {
  let unreadLines = 0;
  /** CSV rows DuckDB rejected, by its line number, with the lines each took. */
  const csvRejected = new Map<number, number>();
  const bad = await rows(
    c,
    `SELECT line, column_name, error_type, csv_line, error_message FROM reject_errors ORDER BY line, column_idx`,
  );
  // The sample's scan and the full one may both have met a row: one reject per line.
  const seen = new Set<number>();
  const found = bad
    .filter((r) => !seen.has(Number(r.line)) && seen.add(Number(r.line)))
    .map((r) => {
      const text = String(r.csv_line ?? '');
      const reason = rejectReason(String(r.error_type), String(r.error_message), csvColumns);
      // An unterminated quote takes every line after it as its value.
      const swallowed = /closing quote never comes/.test(reason)
        ? text.replace(/\r?\n$/, '').split(/\r?\n/).length - 1
        : 0;
      csvRejected.set(Number(r.line), swallowed + 1);
      return { unit: Number(r.line), column: r.column_name, reason, text, swallowed };
    });
  // DuckDB numbers a row by records and blank lines: name it by the line an editor shows.
  const lines = found.length
    ? findLines(file, 'csv', { units: found.map((r) => r.unit) }, csvRejected).units
    : undefined;
  counted?.(found.length);
  for (const r of found) {
    const line = lines?.get(r.unit) ?? r.unit;
    let reason = r.reason;
    // Say how many lines were never read as rows, so nobody takes "rows read" for the whole file.
    if (r.swallowed > 0) {
      unreadLines += r.swallowed;
      const n = r.swallowed;
      reason += `; the ${n === 1 ? 'line' : `${n} lines`} after it (${n === 1 ? `line ${line + 1}` : `lines ${line + 1}-${line + n}`}) ${n === 1 ? 'is' : 'are'} inside that quote and ${n === 1 ? 'was' : 'were'} not read or checked`;
    }
    rejects.add({
      line,
      ...(r.column !== null && r.column !== undefined ? { column: String(r.column) } : {}),
      reason,
      text: r.text,
    });
  }
  return { unreadLines, csvRejected };
}

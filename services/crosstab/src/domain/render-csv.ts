import { stringify } from 'csv-stringify/sync';
import { otherOf } from './other-key';
import { axisText, exactNumber, type AxisValue } from './axis-value';
import type { AxisSpec } from './crosstab-spec';
import type { PivotTable } from './pivot-table';
import { PARTIAL_MARK, partialNote } from './period-compare';

/** A key part's text; the partial last period of a comparison marked as HTML and XLSX mark it. */
const partText = (axis: AxisSpec, v: AxisValue) =>
  safeText(`${axisText(axis, v)}${axis.partialKey !== undefined && v === axis.partialKey ? PARTIAL_MARK : ''}`);

/**
 * What a spreadsheet may read as the start of a formula: = + - @ (and their full-width forms, which some
 * locales' spreadsheets fold), ";" (the argument separator of semicolon locales: `;=1+1`), a tab, a
 * carriage return or a line feed (a cell split there starts a new one).
 */
const FORMULA_START = /^[=+\-@;\t\r\n\uFF1D\uFF0B\uFF0D\uFF20\uFF1B]/;

/**
 * A text cell that a spreadsheet would run as a formula (CSV injection) gets a leading apostrophe, as
 * OWASP advises. A plain number (-5) stays as is. Labels and names come from indexed data, so any
 * record could carry `=HYPERLINK(…)`.
 */
export function safeText(text: string): string {
  return FORMULA_START.test(text) && !/^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(text) ? `'${text}` : text;
}

/** A column's header text: its key parts joined by " / ", a subtotal column as "<value> Total". */
function columnLabel(key: AxisValue[], depth: number, axes: readonly AxisSpec[]): string {
  const parts = key.map((v, i) => partText(axes[i], v));
  if (key.length < depth && !otherOf(key)) parts[parts.length - 1] = `${parts[parts.length - 1]} Total`;
  return parts.join(' / ');
}

/** Row header cells: one per row field; a subtotal row reads "<value> Total" at its own level, blank after. */
function rowCells(key: AxisValue[], depth: number, axes: readonly AxisSpec[]): string[] {
  const cells = key.map((v, i) => partText(axes[i], v));
  if (key.length < depth && !otherOf(key)) cells[cells.length - 1] = `${cells[cells.length - 1]} Total`;
  while (cells.length < depth) cells.push('');
  return cells;
}

/**
 * The table as RFC 4180 CSV (format csv, docs/api.md CROSSTAB.EXECUTE): a header line, one line per
 * row (subtotals included), a last Total line; numbers with a dot and no thousands separators, empty
 * cells empty.
 */
export function renderCsv(table: PivotTable): string {
  const { spec } = table;
  const R = spec.rows.length;
  const C = spec.columns.length;
  const names = spec.totals.map((t) => t.name);
  if (spec.totalsOn === 'rows') return renderCsvTotalsOnRows(table);
  const header = [
    ...spec.rows.map((f) => safeText(f.name)),
    ...table.columns.flatMap((c) => names.map((n) => safeText(`${columnLabel(c, C, spec.columns)} | ${n}`))),
    ...names.map((n) => `Total | ${n}`),
  ];
  const numbers = (values: Array<number | null>) => values.map(exactNumber);
  const line = (head: string[], rowKey: AxisValue[]) => [
    ...head,
    ...table.columns.flatMap((c) => numbers(table.at(rowKey, c))),
    ...numbers(table.at(rowKey, [])),
  ];
  const records = [
    header,
    ...table.rows.map((key) => line(rowCells(key, R, spec.rows), key)),
    line(['Total', ...Array.from({ length: R - 1 }, () => '')], []),
  ];
  return csvText(withNote(table, records));
}

/**
 * totalsOn rows: a line per total under each row, the total's name in a column of its own after the
 * row fields, and one cell per column; the last lines are the Total of each total.
 */
function renderCsvTotalsOnRows(table: PivotTable): string {
  const { spec } = table;
  const R = spec.rows.length;
  const C = spec.columns.length;
  const names = spec.totals.map((t) => safeText(t.name));
  const header = [
    ...spec.rows.map((f) => safeText(f.name)),
    'Totals',
    ...table.columns.map((c) => columnLabel(c, C, spec.columns)),
    'Total',
  ];
  const lines = (head: string[], rowKey: AxisValue[]) =>
    names.map((name, t) => [
      ...head,
      name,
      ...table.columns.map((c) => exactNumber(table.at(rowKey, c)[t])),
      exactNumber(table.at(rowKey, [])[t]),
    ]);
  return csvText(
    withNote(table, [
      header,
      ...table.rows.flatMap((key) => lines(rowCells(key, R, spec.rows), key)),
      ...lines(['Total', ...Array.from({ length: R - 1 }, () => '')], []),
    ]),
  );
}

/**
 * A partial last period's mark explained as HTML's caption explains it: one last line after the Total,
 * the note in its first cell and the others empty (every line as wide as the header, as RFC 4180 asks).
 */
function withNote(table: PivotTable, records: string[][]): string[][] {
  const partial = table.spec.comparePartial;
  if (!partial) return records;
  const width = records[0].length;
  return [...records, [safeText(partialNote(partial)), ...Array.from({ length: width - 1 }, () => '')]];
}

function csvText(records: string[][]): string {
  // csv-stringify quotes a value holding the whole record delimiter (CRLF) but not a lone CR or LF,
  // which every reader takes as the end of a line: RFC 4180 quotes any value with a CR or LF in it.
  return stringify(records, { record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
}

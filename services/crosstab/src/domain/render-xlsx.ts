import { headerSpans, subtotalLabel } from './header-spans';
import ExcelJS from 'exceljs';
import { displayOf } from './crosstab-spec';
import { cellColorer, excelFormat, type CellColors } from './total-look';
import type { PivotTable } from './pivot-table';
import type { AxisValue } from './axis-value';
import { partialNote } from './period-compare';

/** Characters Excel refuses in a sheet name, and its length limit. */
const SHEET_NAME_BAD = /[[\]:*?/\\]/g;
const SHEET_NAME_MAX = 31;

/**
 * A sheet name Excel accepts for an index name: no `[ ] : * ? / \`, no control characters, at most 31
 * characters, not starting or ending with an apostrophe, not empty and not the reserved "History".
 */
export function sheetName(index: string): string {
  let name = index
    .replace(SHEET_NAME_BAD, '_')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, '_')
    .slice(0, SHEET_NAME_MAX)
    .replace(/^'+|'+$/g, '');
  if (name.trim() === '' || name.toLowerCase() === 'history') name = name.trim() === '' ? 'Crosstab' : `${name}_`;
  return name;
}

/** Excel shows at most seven outline levels. */
const OUTLINE_MAX = 7;

/**
 * The outline level of a row or column of `key` when subtotals are on: detail at the innermost level,
 * each subtotal one level out, so Excel's +/- buttons fold a group into its subtotal (which follows it).
 */
function outlineOf(key: readonly AxisValue[], depth: number): number {
  return Math.min(OUTLINE_MAX, key.length < depth ? key.length - 1 : depth - 1);
}

/** Folds subtotal groups: rows (and columns) get outline levels, summaries below and to the right. */
function outline(sheet: ExcelJS.Worksheet, levels: { rows: number; columns: number }): void {
  sheet.properties.outlineLevelRow = Math.min(OUTLINE_MAX, levels.rows);
  sheet.properties.outlineLevelCol = Math.min(OUTLINE_MAX, levels.columns);
  sheet.properties.outlineProperties = { summaryBelow: true, summaryRight: true };
}

/** The display format of a measure: percentages as `0.0%` of a fraction, counts without decimals. */
function numberFormats(table: PivotTable): string[] {
  const { spec } = table;
  const keys = [...table.rows, []];
  const columns = [...table.columns, []];
  return spec.totals.map((t, m) => {
    if (t.look?.format) return excelFormat(t.look.format, displayOf(t).percent);
    if (displayOf(t).percent) return '0.0%';
    const whole = keys.every((r) => columns.every((c) => Number.isInteger(table.at(r, c)[m] ?? 0)));
    return whole ? '#,##0' : '#,##0.00';
  });
}

const argb = (hex: string) => `FF${hex.slice(1).toUpperCase()}`;

/** A rule's colours on a cell: a solid fill, and the text colour that reads on it. */
function paint(cell: ExcelJS.Cell, colors: CellColors | undefined, bold: boolean): void {
  if (!colors) {
    if (bold) cell.font = { bold: true };
    return;
  }
  cell.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: argb(colors.background) } };
  cell.font = { bold, color: { argb: argb(colors.text) } };
}

/**
 * A partial last period's mark explained as HTML's caption and CSV's last line explain it: a note row
 * one blank row under the table, in grey italics, in the first cell alone. Not merged: a merged cell
 * clips its text at the merge's edge, where a lone cell's text runs on over the empty cells beside it.
 */
function partialNoteRow(sheet: ExcelJS.Worksheet, table: PivotTable, below: number): void {
  const partial = table.spec.comparePartial;
  if (!partial) return;
  const cell = sheet.getCell(below + 2, 1);
  cell.value = partialNote(partial);
  cell.font = { italic: true, color: { argb: 'FF595959' } };
}

/**
 * The crosstab as an Excel workbook (format xlsx): one sheet named after the index, laid out as the
 * HTML table is (renderHtml): the row fields' names, nested column headers merged over their columns,
 * a row of total names when there are several, row labels merged down their groups, subtotal rows and
 * the Total row in bold, the header rows and row-label columns frozen, subtotal groups as outline groups
 * (Excel folds a group into its subtotal row or column). Numbers are number cells with a
 * display format per measure; every label is a string cell (exceljs writes a string as text, never as
 * a formula, so `=1+1` from the data stays text). Returns the file's bytes.
 */
export async function renderXlsx(table: PivotTable, index: string): Promise<Buffer> {
  const { spec } = table;
  if (spec.totalsOn === 'rows') return renderXlsxTotalsOnRows(table, index);
  const t = spec.totals.length;
  const R = spec.rows.length;
  const C = spec.columns.length;
  const nameRow = t > 1 || C === 0;
  const headerRows = C + (nameRow ? 1 : 0);
  const formats = numberFormats(table);
  const percent = spec.totals.map((x) => displayOf(x).percent);
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet(sheetName(index), {
    views: [{ state: 'frozen', xSplit: R, ySplit: headerRows }],
  });
  const bold = { bold: true };
  // Cells are 1-based: row r, column c.
  const text = (r: number, c: number, value: string, strong = false) => {
    const cell = sheet.getCell(r, c);
    cell.value = value;
    if (strong) cell.font = bold;
  };
  const merge = (r1: number, c1: number, r2: number, c2: number) => {
    if (r2 > r1 || c2 > c1) sheet.mergeCells(r1, c1, r2, c2);
  };
  const colors = cellColorer(table);
  const numbers = (r: number, firstColumn: number, row: AxisValue[], column: AxisValue[], strong: boolean) => {
    table.at(row, column).forEach((v, m) => {
      const cell = sheet.getCell(r, firstColumn + m);
      if (v !== null) {
        cell.value = percent[m] ? v / 100 : v;
        cell.numFmt = formats[m];
      }
      paint(cell, colors(m, row, column, v), strong);
    });
  };

  // Header: the row fields' names down the header rows, then the column levels, then the totals' names.
  spec.rows.forEach((f, i) => {
    text(1, i + 1, f.name, true);
    merge(1, i + 1, headerRows, i + 1);
  });
  const firstValueColumn = R + 1;
  const columnGroups = C ? table.columns.length + 1 : 1;
  for (let level = 0; level < C; level++) {
    const row = level + 1;
    const runs = headerSpans(table.columns, level, C, spec.columns);
    table.columns.forEach((key, j) => {
      const at = firstValueColumn + j * t;
      const run = runs.get(j);
      if (run) {
        text(row, at, run[1], true);
        merge(row, at, row, at + run[0] * t - 1);
      }
      if (key.length < C && key.length === level + 1) {
        text(row, at, subtotalLabel(key, spec.columns), true);
        merge(row, at, C, at + t - 1);
      }
    });
    if (level === 0) {
      const at = firstValueColumn + table.columns.length * t;
      text(row, at, 'Total', true);
      merge(row, at, C, at + t - 1);
    }
  }
  if (nameRow) {
    for (let g = 0; g < columnGroups; g++)
      spec.totals.forEach((x, m) => text(headerRows, firstValueColumn + g * t + m, x.name, true));
  }

  // Body: row labels merged down their groups (a subtotal's "<value> Total" across the inner levels).
  const rowRuns = spec.rows.map((_, level) => headerSpans(table.rows, level, R, spec.rows));
  table.rows.forEach((key, i) => {
    const row = headerRows + 1 + i;
    const subtotal = key.length < R;
    rowRuns.forEach((runs, level) => {
      const run = runs.get(i);
      if (run) {
        text(row, level + 1, run[1], subtotal);
        merge(row, level + 1, row + run[0] - 1, level + 1);
      }
      if (subtotal && level === key.length - 1) {
        text(row, level + 1, subtotalLabel(key, spec.rows), true);
        merge(row, level + 1, row, R);
      }
    });
    table.columns.forEach((c, j) => numbers(row, firstValueColumn + j * t, key, c, subtotal));
    numbers(row, firstValueColumn + table.columns.length * t, key, [], subtotal);
    if (spec.subtotals && R > 1) sheet.getRow(row).outlineLevel = outlineOf(key, R);
  });
  if (spec.subtotals) {
    if (C > 1)
      table.columns.forEach((key, j) => {
        for (let m = 0; m < t; m++) sheet.getColumn(firstValueColumn + j * t + m).outlineLevel = outlineOf(key, C);
      });
    outline(sheet, { rows: Math.max(0, R - 1), columns: Math.max(0, C - 1) });
  }
  const last = headerRows + table.rows.length + 1;
  text(last, 1, 'Total', true);
  merge(last, 1, last, R);
  table.columns.forEach((c, j) => numbers(last, firstValueColumn + j * t, [], c, true));
  numbers(last, firstValueColumn + table.columns.length * t, [], [], true);
  partialNoteRow(sheet, table, last);

  for (let c = 1; c <= R; c++) sheet.getColumn(c).width = 18;
  return Buffer.from(await book.xlsx.writeBuffer());
}

/**
 * totalsOn rows, laid out as the HTML table is then: a row per total under each row (its name in a
 * column after the row fields), one cell per column, the column headers without the totals' names.
 */
async function renderXlsxTotalsOnRows(table: PivotTable, index: string): Promise<Buffer> {
  const { spec } = table;
  const T = spec.totals.length;
  const R = spec.rows.length;
  const C = spec.columns.length;
  const headerRows = Math.max(1, C);
  const formats = numberFormats(table);
  const percent = spec.totals.map((x) => displayOf(x).percent);
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet(sheetName(index), {
    views: [{ state: 'frozen', xSplit: R + 1, ySplit: headerRows }],
  });
  const bold = { bold: true };
  const text = (r: number, c: number, value: string, strong = false) => {
    const cell = sheet.getCell(r, c);
    cell.value = value;
    if (strong) cell.font = bold;
  };
  const merge = (r1: number, c1: number, r2: number, c2: number) => {
    if (r2 > r1 || c2 > c1) sheet.mergeCells(r1, c1, r2, c2);
  };
  const firstValueColumn = R + 2;
  const colors = cellColorer(table);
  [...spec.rows.map((f) => f.name), 'Totals'].forEach((name, i) => {
    text(1, i + 1, name, true);
    merge(1, i + 1, headerRows, i + 1);
  });
  for (let level = 0; level < C; level++) {
    const runs = headerSpans(table.columns, level, C, spec.columns);
    table.columns.forEach((key, j) => {
      const run = runs.get(j);
      if (run) {
        text(level + 1, firstValueColumn + j, run[1], true);
        merge(level + 1, firstValueColumn + j, level + 1, firstValueColumn + j + run[0] - 1);
      }
      if (key.length < C && key.length === level + 1) {
        text(level + 1, firstValueColumn + j, subtotalLabel(key, spec.columns), true);
        merge(level + 1, firstValueColumn + j, C, firstValueColumn + j);
      }
    });
  }
  const totalColumn = firstValueColumn + table.columns.length;
  text(1, totalColumn, 'Total', true);
  merge(1, totalColumn, headerRows, totalColumn);

  /** The rows of one key from `first`: one per total, its name, then a cell per column and the Total. */
  const group = (first: number, key: AxisValue[], strong: boolean) =>
    spec.totals.forEach((x, m) => {
      const row = first + m;
      text(row, R + 1, x.name, strong);
      [...table.columns, []].forEach((c, j) => {
        const cell = sheet.getCell(row, firstValueColumn + j);
        const v = table.at(key, c)[m];
        if (v !== null) {
          cell.value = percent[m] ? v / 100 : v;
          cell.numFmt = formats[m];
        }
        paint(cell, colors(m, key, c, v), strong);
      });
    });
  const rowRuns = spec.rows.map((_, level) => headerSpans(table.rows, level, R, spec.rows));
  table.rows.forEach((key, i) => {
    const first = headerRows + 1 + i * T;
    const subtotal = key.length < R;
    rowRuns.forEach((runs, level) => {
      const run = runs.get(i);
      if (run) {
        text(first, level + 1, run[1], subtotal);
        merge(first, level + 1, first + run[0] * T - 1, level + 1);
      }
      if (subtotal && level === key.length - 1) {
        text(first, level + 1, subtotalLabel(key, spec.rows), true);
        merge(first, level + 1, first + T - 1, R);
      }
    });
    group(first, key, subtotal);
    if (spec.subtotals && R > 1) for (let m = 0; m < T; m++) sheet.getRow(first + m).outlineLevel = outlineOf(key, R);
  });
  if (spec.subtotals) {
    if (C > 1)
      table.columns.forEach((key, j) => (sheet.getColumn(firstValueColumn + j).outlineLevel = outlineOf(key, C)));
    outline(sheet, { rows: Math.max(0, R - 1), columns: Math.max(0, C - 1) });
  }
  const last = headerRows + 1 + table.rows.length * T;
  text(last, 1, 'Total', true);
  merge(last, 1, last + T - 1, R);
  group(last, [], true);
  partialNoteRow(sheet, table, last + T - 1);
  for (let c = 1; c <= R + 1; c++) sheet.getColumn(c).width = 18;
  return Buffer.from(await book.xlsx.writeBuffer());
}

import { headerSpans, subtotalLabel } from './header-spans';
import { escape } from 'html-escaper';
import { cellColorer, textFormatter } from './total-look';
import type { PivotTable } from './pivot-table';
import { otherOf } from './other-key';
import type { AxisValue } from './axis-value';
import { partialNote } from './period-compare';

/**
 * Every data cell is a number: one rule right-aligns them all (tabular figures line digits up). It is
 * scoped to this table's class, and costs nothing per cell: an inline style on each `<td>` was 60% of
 * a large table's bytes.
 */
const STYLE = '<style>table.quarry-crosstab td{text-align:right;font-variant-numeric:tabular-nums}</style>';
const SUBTOTAL = 'quarry-subtotal';
/** The "Other (N)" row: not a subtotal of what is above it, but of the values left out. */
const OTHER = 'quarry-other';

/**
 * An Other header's class and how many values it stands for: a page or a script tells it from a real key
 * of the same text by these, not by its label.
 */
const otherAttrs = (key: AxisValue[]): string => {
  const other = otherOf(key);
  return other ? ` class="${OTHER}" data-other="${other.count}"` : '';
};

/** A row's class: the Other row, a subtotal row, or none. */
const rowClass = (key: AxisValue[], subtotal: boolean): string =>
  otherOf(key) ? ` class="${OTHER}"` : subtotal ? ` class="${SUBTOTAL}"` : '';

/**
 * A value cell: the total's format (or the plain locale-free number), its colours inline when a rule
 * colours it.
 */
function valueCells(table: PivotTable): (row: AxisValue[], column: AxisValue[], m: number) => string {
  const text = table.spec.totals.map(textFormatter);
  // The plain number (and percent) text is digits, signs, a point, an exponent: nothing to escape.
  const plain = table.spec.totals.map((t) => !t.look?.format);
  const colors = cellColorer(table);
  // A cell's values are read once for all its totals (each read applies showAs to every total).
  let row: AxisValue[] | undefined;
  let read = new Map<AxisValue[], ReturnType<PivotTable['at']>>();
  const at = (r: AxisValue[], c: AxisValue[]) => {
    if (r !== row) [row, read] = [r, new Map()];
    let values = read.get(c);
    if (!values) read.set(c, (values = table.at(r, c)));
    return values;
  };
  return (r, c, m) => {
    const v = at(r, c)[m];
    if (v === null) return '<td></td>';
    const look = colors(m, r, c, v);
    const shown = plain[m] ? text[m](v) : escape(text[m](v));
    return look ? `<td style="background:${look.background};color:${look.text}">${shown}</td>` : `<td>${shown}</td>`;
  };
}

function caption(table: PivotTable): string {
  const { spec } = table;
  const rowNames = spec.rows.map((f) => f.name).join(' / ');
  const parts = [spec.columns.length ? `${rowNames} by ${spec.columns.map((c) => c.name).join(' / ')}` : rowNames];
  if (spec.rowLimit !== null && table.rowsOmitted > 0)
    parts.push(`top ${table.outerRows - table.rowsOmitted} of ${table.outerRows} ${spec.rows[0].name}`);
  if (spec.columnLimit !== null && table.columnsOmitted > 0) {
    parts.push(`top ${table.outerColumns - table.columnsOmitted} of ${table.outerColumns} ${spec.columns[0].name}`);
  }
  if (spec.comparePartial) parts.push(partialNote(spec.comparePartial));
  return parts.join('; ');
}

/**
 * The crosstab as one accessible `<table>`: a header row per column level (plus one naming the totals
 * when there are several), row headers nested with rowspans, subtotal rows and columns marked with a
 * class and headed "<value> Total", a Total column and a Total row. Every text is HTML-escaped; numbers
 * are right-aligned (STYLE) in a locale-free format, percentages with a % sign, unless a total's format
 * says otherwise; highlight rules and colour scales colour cells inline.
 */
export function renderHtml(table: PivotTable): string {
  const { spec } = table;
  if (spec.totalsOn === 'rows') return renderHtmlTotalsOnRows(table);
  const t = spec.totals.length;
  const rowLevels = spec.rows.length;
  const colLevels = spec.columns.length;
  const nameRow = t > 1 || colLevels === 0;
  const headerRows = colLevels + (nameRow ? 1 : 0);
  const value = valueCells(table);
  const cell = (row: AxisValue[], column: AxisValue[]) => spec.totals.map((_, m) => value(row, column, m)).join('');
  const limited =
    (spec.rowLimit !== null && table.rowsOmitted > 0) ||
    (spec.columnLimit !== null && table.columnsOmitted > 0) ||
    spec.comparePartial !== undefined;
  const out: string[] = [STYLE, '<table class="quarry-crosstab">'];
  if (colLevels || limited) out.push(`<caption>${escape(caption(table))}</caption>`);
  out.push('<thead>');
  for (let row = 0; row < headerRows; row++) {
    out.push('<tr>');
    if (row === 0)
      for (const f of spec.rows) out.push(`<th scope="col" rowspan="${headerRows}">${escape(f.name)}</th>`);
    if (row < colLevels) {
      const leaf = row === colLevels - 1;
      const runs = headerSpans(table.columns, row, colLevels, spec.columns);
      table.columns.forEach((key, i) => {
        const run = runs.get(i);
        if (run)
          out.push(
            `<th scope="${leaf && t === 1 ? 'col' : 'colgroup'}" colspan="${run[0] * t}"${otherAttrs(key)}>${escape(run[1])}</th>`,
          );
        if (key.length < colLevels && key.length === row + 1) {
          const mark = otherAttrs(key) || ` class="${SUBTOTAL}"`;
          out.push(
            `<th scope="${t === 1 ? 'col' : 'colgroup'}"${mark} rowspan="${colLevels - row}" colspan="${t}">${escape(subtotalLabel(key, spec.columns))}</th>`,
          );
        }
      });
      if (row === 0)
        out.push(`<th scope="${t === 1 ? 'col' : 'colgroup'}" rowspan="${colLevels}" colspan="${t}">Total</th>`);
    } else {
      // The totals' names: once per column (and once under Total when there are column fields).
      const groups = colLevels ? table.columns.length + 1 : 1;
      for (let g = 0; g < groups; g++) for (const x of spec.totals) out.push(`<th scope="col">${escape(x.name)}</th>`);
    }
    out.push('</tr>');
  }
  out.push('</thead>', '<tbody>');
  const rowRuns = spec.rows.map((_, level) => headerSpans(table.rows, level, rowLevels, spec.rows));
  table.rows.forEach((key, r) => {
    const subtotal = key.length < rowLevels;
    out.push(`<tr${rowClass(key, subtotal)}>`);
    rowRuns.forEach((runs, level) => {
      const run = runs.get(r);
      if (run)
        out.push(`<th scope="row"${run[0] > 1 ? ` rowspan="${run[0]}"` : ''}${otherAttrs(key)}>${escape(run[1])}</th>`);
      if (subtotal && level === key.length - 1) {
        const span = rowLevels - level;
        out.push(
          `<th scope="row"${span > 1 ? ` colspan="${span}"` : ''}${otherAttrs(key)}>${escape(subtotalLabel(key, spec.rows))}</th>`,
        );
      }
    });
    for (const c of table.columns) out.push(cell(key, c));
    out.push(cell(key, []));
    out.push('</tr>');
  });
  out.push('</tbody>', '<tfoot>', '<tr>');
  out.push(`<th scope="row"${rowLevels > 1 ? ` colspan="${rowLevels}"` : ''}>Total</th>`);
  for (const c of table.columns) out.push(cell([], c));
  out.push(cell([], []));
  out.push('</tr>', '</tfoot>', '</table>');
  return out.join('');
}

/**
 * totalsOn rows: each row is a group of one row per total, the total's name in a header cell of its own
 * (after the row fields), so each column has one cell per row and the totals' names are not repeated
 * under every column. The Total row is a group in the footer the same way.
 */
function renderHtmlTotalsOnRows(table: PivotTable): string {
  const { spec } = table;
  const T = spec.totals.length;
  const rowLevels = spec.rows.length;
  const colLevels = spec.columns.length;
  const headerRows = Math.max(1, colLevels);
  const value = valueCells(table);
  const limited =
    (spec.rowLimit !== null && table.rowsOmitted > 0) ||
    (spec.columnLimit !== null && table.columnsOmitted > 0) ||
    spec.comparePartial !== undefined;
  const out: string[] = [STYLE, '<table class="quarry-crosstab">'];
  if (colLevels || limited) out.push(`<caption>${escape(caption(table))}</caption>`);
  out.push('<thead>');
  for (let row = 0; row < headerRows; row++) {
    out.push('<tr>');
    if (row === 0) {
      for (const f of spec.rows) out.push(`<th scope="col" rowspan="${headerRows}">${escape(f.name)}</th>`);
      out.push(`<th scope="col" rowspan="${headerRows}">Totals</th>`);
    }
    if (colLevels) {
      const leaf = row === colLevels - 1;
      const runs = headerSpans(table.columns, row, colLevels, spec.columns);
      table.columns.forEach((key, i) => {
        const run = runs.get(i);
        if (run)
          out.push(
            `<th scope="${leaf ? 'col' : 'colgroup'}" colspan="${run[0]}"${otherAttrs(key)}>${escape(run[1])}</th>`,
          );
        if (key.length < colLevels && key.length === row + 1)
          out.push(
            `<th scope="col"${otherAttrs(key) || ` class="${SUBTOTAL}"`} rowspan="${colLevels - row}">${escape(subtotalLabel(key, spec.columns))}</th>`,
          );
      });
    }
    if (row === 0) out.push(`<th scope="col" rowspan="${headerRows}">Total</th>`);
    out.push('</tr>');
  }
  out.push('</thead>', '<tbody>');
  const rowRuns = spec.rows.map((_, level) => headerSpans(table.rows, level, rowLevels, spec.rows));
  const group = (key: AxisValue[], heads: (t: number) => string) =>
    spec.totals.forEach((x, t) => {
      out.push(`<tr${rowClass(key, key.length > 0 && key.length < rowLevels)}>`);
      out.push(heads(t), `<th scope="row">${escape(x.name)}</th>`);
      for (const c of table.columns) out.push(value(key, c, t));
      out.push(value(key, [], t), '</tr>');
    });
  table.rows.forEach((key, r) => {
    const subtotal = key.length < rowLevels;
    group(key, (t) => {
      if (t > 0) return '';
      const heads: string[] = [];
      rowRuns.forEach((runs, level) => {
        const run = runs.get(r);
        if (run) heads.push(`<th scope="rowgroup" rowspan="${run[0] * T}"${otherAttrs(key)}>${escape(run[1])}</th>`);
        if (subtotal && level === key.length - 1) {
          const span = rowLevels - level;
          heads.push(
            `<th scope="rowgroup" rowspan="${T}"${span > 1 ? ` colspan="${span}"` : ''}${otherAttrs(key)}>${escape(subtotalLabel(key, spec.rows))}</th>`,
          );
        }
      });
      return heads.join('');
    });
  });
  out.push('</tbody>', '<tfoot>');
  group([], (t) =>
    t > 0 ? '' : `<th scope="rowgroup" rowspan="${T}"${rowLevels > 1 ? ` colspan="${rowLevels}"` : ''}>Total</th>`,
  );
  out.push('</tfoot>', '</table>');
  return out.join('');
}

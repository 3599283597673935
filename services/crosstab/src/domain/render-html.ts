import { escape } from 'html-escaper';
import { formatNumber, type CrosstabGrid } from './crosstab-grid';

const NUM = ' class="num" style="text-align:right"';

/** Spans of consecutive equal prefixes of `keys` at `level`: [start, length, label]. */
function spans(keys: string[][], level: number): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  keys.forEach((k, i) => {
    const prefix = JSON.stringify(k.slice(0, level + 1));
    const last = out[out.length - 1];
    if (last && JSON.stringify(keys[last[0]].slice(0, level + 1)) === prefix) last[1]++;
    else out.push([i, 1, k[level]]);
  });
  return out;
}

/**
 * The crosstab as one accessible `<table>`: a header row per column level (plus one naming the totals
 * when there are several), row headers nested with rowspans, a Total column and a Total row. Every
 * text is HTML-escaped; numbers are right-aligned in a locale-free format.
 */
export function renderHtml(grid: CrosstabGrid): string {
  const t = grid.totals.length;
  const colLevels = grid.columnFields.length;
  const nameRow = t > 1 || colLevels === 0;
  const headerRows = colLevels + (nameRow ? 1 : 0);
  const out: string[] = ['<table class="quarry-crosstab">'];
  if (grid.columnFields.length) out.push(`<caption>${escape(grid.rowFields.join(' / '))} by ${escape(grid.columnFields.join(' / '))}</caption>`);
  out.push('<thead>');
  for (let row = 0; row < headerRows; row++) {
    out.push('<tr>');
    if (row === 0) for (const f of grid.rowFields) out.push(`<th scope="col" rowspan="${headerRows}">${escape(f)}</th>`);
    if (row < colLevels) {
      const leaf = row === colLevels - 1;
      for (const [, len, label] of spans(grid.columns, row)) {
        const scope = leaf && t === 1 ? 'col' : 'colgroup';
        out.push(`<th scope="${scope}" colspan="${len * t}">${escape(label)}</th>`);
      }
      if (row === 0) out.push(`<th scope="${t === 1 ? 'col' : 'colgroup'}" rowspan="${colLevels}" colspan="${t}">Total</th>`);
    } else {
      // The totals' names: once per column (and once under Total when there are column fields).
      const groups = colLevels ? grid.columns.length + 1 : 1;
      for (let g = 0; g < groups; g++) for (const name of grid.totals) out.push(`<th scope="col">${escape(name)}</th>`);
    }
    out.push('</tr>');
  }
  out.push('</thead>', '<tbody>');
  const rowSpans = grid.rowFields.map((_, level) => new Map(spans(grid.rows, level).map(([start, len, label]) => [start, [len, label] as const])));
  const withColumns = colLevels > 0;
  grid.rows.forEach((_, r) => {
    out.push('<tr>');
    rowSpans.forEach((levelSpans) => {
      const span = levelSpans.get(r);
      if (span) out.push(`<th scope="row"${span[0] > 1 ? ` rowspan="${span[0]}"` : ''}>${escape(span[1])}</th>`);
    });
    if (withColumns) for (const cell of grid.cells[r]) for (const v of cell) out.push(`<td${NUM}>${formatNumber(v)}</td>`);
    for (const v of grid.rowTotals[r]) out.push(`<td${NUM}>${formatNumber(v)}</td>`);
    out.push('</tr>');
  });
  out.push('</tbody>', '<tfoot>', '<tr>');
  out.push(`<th scope="row"${grid.rowFields.length > 1 ? ` colspan="${grid.rowFields.length}"` : ''}>Total</th>`);
  if (withColumns) for (const c of grid.columnTotals) for (const v of c) out.push(`<td${NUM}>${formatNumber(v)}</td>`);
  for (const v of grid.grandTotals) out.push(`<td${NUM}>${formatNumber(v)}</td>`);
  out.push('</tr>', '</tfoot>', '</table>');
  return out.join('');
}

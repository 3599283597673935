import { formatServerCell, parseServerNumber } from '../number-format';

/*
 * The server's crosstab table (its HTML, escaped and accessible, with nested headers and subtotals),
 * parsed inertly and rebuilt from an allowlist: anything else becomes its text, so even a server bug
 * that let markup through could not add a script, a link or a redirect. Numbers are rewritten in the
 * reader's format unless a total's format wrote them (the exact value stays in the cell's title), a
 * highlighted cell keeps its colours, row labels are marked to stick.
 */

const TABLE_TAGS = new Set([
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'colgroup',
  'col',
  'span',
  'abbr',
]);
const TABLE_ATTRS = new Set(['colspan', 'rowspan', 'scope', 'class', 'headers', 'id', 'title', 'aria-label', 'role']);

/**
 * The only inline style the server writes, a rule's colours (`background:#rrggbb;color:#rrggbb`), moved
 * to a data attribute before parsing: even an inert parse of a style attribute is refused (and reported)
 * under the page's CSP.
 */
const STYLE_ATTR = / style="background:(#[0-9a-f]{6});color:(#[0-9a-f]{6})"/gi;
const CELL_COLORS = /^(#[0-9a-f]{6}) (#[0-9a-f]{6})$/i;

/** A highlighted cell's colours, set through the CSSOM (which the CSP allows): two exact colours, nothing else. */
function paintCell(td: HTMLElement, style: string): void {
  const m = CELL_COLORS.exec(style.trim());
  if (!m) return;
  td.style.backgroundColor = m[1];
  td.style.color = m[2];
  td.classList.add('painted');
}

function rebuild(node: Node): Node | null {
  if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.textContent ?? '');
  if (!(node instanceof Element)) return null;
  const tag = node.tagName.toLowerCase();
  if (!TABLE_TAGS.has(tag)) return node.textContent ? document.createTextNode(node.textContent) : null;
  const copy = document.createElement(tag);
  for (const attr of Array.from(node.attributes))
    if (TABLE_ATTRS.has(attr.name)) copy.setAttribute(attr.name, attr.value);
  if (tag === 'td') {
    // A data cell holds one number (or nothing): shown in the reader's format, the exact figure on hover.
    const text = node.textContent ?? '';
    const n = parseServerNumber(text);
    copy.textContent = formatServerCell(text);
    if (n) copy.setAttribute('title', text);
    copy.classList.add('num');
    paintCell(copy, node.getAttribute('data-colors') ?? '');
    return copy;
  }
  for (const child of Array.from(node.childNodes)) {
    const c = rebuild(child);
    if (c) copy.append(c);
  }
  return copy;
}

export function importCrosstabTable(html: string, rowFields: number): HTMLTableElement | undefined {
  // The table's own <style> rule would be refused by the page's CSP (and reported): the console's
  // stylesheet styles the table instead.
  const doc = new DOMParser().parseFromString(
    html.replace(/<style[\s\S]*?<\/style>/gi, '').replace(STYLE_ATTR, ' data-colors="$1 $2"'),
    'text/html',
  );
  const source = doc.querySelector('table');
  const table = source ? rebuild(source) : null;
  if (!(table instanceof HTMLTableElement)) return undefined;
  table.classList.add('grid', 'crosstab');
  for (const th of Array.from(table.querySelectorAll('tbody th[scope=row], tfoot th[scope=row]')))
    th.classList.add('row-label');
  // The first header row starts with one cell per row field (spanning every header row): the corner.
  const first = table.tHead?.rows[0];
  if (first) for (const th of Array.from(first.cells).slice(0, rowFields)) th.classList.add('row-label', 'corner');
  return table;
}

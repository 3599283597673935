import { formatServerCell, parseServerNumber } from '../number-format';

/*
 * The server's crosstab table (its HTML, escaped and accessible, with nested headers and subtotals),
 * parsed inertly and rebuilt from an allowlist: anything else becomes its text, so even a server bug
 * that let markup through could not add a script, a link or a redirect. Numbers are rewritten in the
 * reader's format (the exact value stays in the cell's title), row labels are marked to stick.
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
  const doc = new DOMParser().parseFromString(html.replace(/<style[\s\S]*?<\/style>/gi, ''), 'text/html');
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

import { parseFragment, type DefaultTreeAdapterMap } from 'parse5';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

function isElement(n: Node): n is Element {
  return 'tagName' in n;
}

export function elements(root: Node, tag?: string): Element[] {
  const out: Element[] = [];
  const walk = (n: Node) => {
    if (isElement(n) && (!tag || n.tagName === tag)) out.push(n);
    if ('childNodes' in n) for (const c of n.childNodes) walk(c);
    if (isElement(n) && n.tagName === 'template') walk((n as unknown as { content: Node }).content);
  };
  walk(root);
  return out;
}

export function text(n: Node): string {
  if (n.nodeName === '#text') return (n as DefaultTreeAdapterMap['textNode']).value;
  return 'childNodes' in n ? n.childNodes.map(text).join('') : '';
}

export const attr = (e: Element, name: string) => e.attrs.find((a) => a.name === name)?.value;

export interface ParsedTable {
  root: Node;
  table: Element;
  /** thead, tbody and tfoot rows expanded into a grid: spanned cells repeat. */
  head: string[][];
  body: string[][];
  foot: string[][];
  /** the tag (th/td) and attributes of the original cells, by section. */
  cells: { head: Element[][]; body: Element[][]; foot: Element[][] };
}

/** The HTML table algorithm, reduced: rowspan/colspan expanded into a rectangular grid. */
function expand(rows: Element[]): { grid: string[][]; cells: Element[][] } {
  const grid: string[][] = [];
  const pending: Array<{ left: number; value: string } | undefined> = [];
  rows.forEach((tr, r) => {
    grid[r] = [];
    let col = 0;
    const place = () => {
      while (pending[col] && pending[col]!.left > 0) {
        grid[r][col] = pending[col]!.value;
        pending[col]!.left--;
        col++;
      }
    };
    const cellEls = tr.childNodes.filter(isElement).filter((c) => c.tagName === 'th' || c.tagName === 'td');
    for (const cell of cellEls) {
      place();
      const rs = Number(attr(cell, 'rowspan') ?? 1);
      const cs = Number(attr(cell, 'colspan') ?? 1);
      const value = text(cell);
      for (let k = 0; k < cs; k++) {
        grid[r][col] = value;
        if (rs > 1) pending[col] = { left: rs - 1, value };
        col++;
      }
    }
    place();
  });
  return {
    grid,
    cells: rows.map((tr) => tr.childNodes.filter(isElement).filter((c) => c.tagName === 'th' || c.tagName === 'td')),
  };
}

export function parseTable(html: string): ParsedTable {
  const root = parseFragment(html) as unknown as Node;
  const tables = elements(root, 'table');
  if (tables.length !== 1) throw new Error(`expected one table, found ${tables.length}`);
  const table = tables[0];
  const section = (tag: string) => {
    const s = elements(table, tag)[0];
    return s ? elements(s, 'tr') : [];
  };
  const head = expand(section('thead'));
  const body = expand(section('tbody'));
  const foot = expand(section('tfoot'));
  return {
    root,
    table,
    head: head.grid,
    body: body.grid,
    foot: foot.grid,
    cells: { head: head.cells, body: body.cells, foot: foot.cells },
  };
}

/**
 * Reads a crosstab into {rowKey → {columnPath → number|null}}; the column path is the header labels of
 * that column top to bottom joined with " | ", the row key the row headers joined with " | ".
 */
export function crosstabValues(
  t: ParsedTable,
  rowFields: number,
): { cells: Map<string, Map<string, number | null>>; columns: string[]; rows: string[] } {
  const width = t.head[0].length;
  const columns: string[] = [];
  for (let j = rowFields; j < width; j++) columns.push(t.head.map((r) => r[j]).join(' | '));
  const cells = new Map<string, Map<string, number | null>>();
  const rows: string[] = [];
  const read = (grid: string[][], totalRow: boolean) => {
    for (const r of grid) {
      const key = totalRow ? 'Total' : r.slice(0, rowFields).join(' | ');
      rows.push(key);
      const m = new Map<string, number | null>();
      columns.forEach((c, j) => {
        const v = r[rowFields + j];
        m.set(c, v === '' ? null : Number(v));
      });
      cells.set(key, m);
    }
  };
  read(t.body, false);
  read(t.foot, true);
  return { cells, columns, rows };
}

import { plainAxis, specWith } from '../../test-support/crosstab-input';
import { parse } from 'csv-parse/sync';
import { parseFragment, type DefaultTreeAdapterMap } from 'parse5';
import type { FieldDef } from '@quarry/query-language';
import type { AxisValue, GroupRow } from './axis-value';
import type { CrosstabSpec, TotalSpec } from './crosstab-spec';
import { pivotLevels } from './crosstab-spec';
import { buildPivotTable } from './pivot-table';
import { renderCsv } from './render-csv';
import { renderHtml } from './render-html';
import { renderJson } from './render-json';

type Element = DefaultTreeAdapterMap['element'];
type Node = DefaultTreeAdapterMap['node'];

const field = (name: string): FieldDef => ({ name, type: 'string' }) as FieldDef;

/** Records of three text fields and an amount; the groups an engine would return, computed naively. */
const RECORDS: Array<{ a: string; b: string; c: string; x: string; y: string; amount: number }> = [];
['<East>', 'West'].forEach((a, i) =>
  ['p', 'q'].forEach((b, j) =>
    ['u', 'v'].forEach((c, k) =>
      ['X1', 'X2'].forEach((x, l) =>
        ['y1', 'y2'].forEach((y, m) => RECORDS.push({ a, b, c, x, y, amount: 1 + i + 2 * j + 3 * k + 5 * l + 7 * m })),
      ),
    ),
  ),
);

function groupsFor(spec: CrosstabSpec): GroupRow[] {
  const rows = spec.rows.map((f) => f.name) as Array<keyof (typeof RECORDS)[number]>;
  const cols = spec.columns.map((c) => c.field.name) as Array<keyof (typeof RECORDS)[number]>;
  const out = new Map<string, GroupRow>();
  for (const [r, c] of pivotLevels(spec)) {
    for (const rec of RECORDS) {
      const rowKey: AxisValue[] = rows.slice(0, r).map((f) => rec[f]);
      const columnKey: AxisValue[] = cols.slice(0, c).map((f) => rec[f]);
      const k = JSON.stringify([rowKey, columnKey]);
      const g = out.get(k) ?? { rowKey, columnKey, values: [0] };
      g.values[0] = (g.values[0] ?? 0) + rec.amount;
      out.set(k, g);
    }
  }
  return [...out.values()];
}

const SUM: TotalSpec = {
  aggregation: 'Sum',
  field: { name: 'amount', type: 'number' } as FieldDef,
  name: 'Sum <amount>',
  showAs: 'value',
};

function spec(rows: string[], columns: string[], over: Partial<CrosstabSpec> = {}): CrosstabSpec {
  return specWith({
    rows: rows.map((r) => plainAxis(field(r))),
    columns: columns.map((c) => plainAxis(field(c))),
    totals: [SUM],
    subtotals: true,
    ...over,
  });
}

function elements(node: Node, tag: string): Element[] {
  const out: Element[] = [];
  const walk = (n: Node) => {
    if ('tagName' in n && n.tagName === tag) out.push(n);
    if ('childNodes' in n) for (const c of n.childNodes) walk(c as Node);
  };
  walk(node);
  return out;
}
const attr = (e: Element, name: string) => e.attrs.find((a) => a.name === name)?.value;
const text = (e: Element): string =>
  e.childNodes
    .map((c) => ('value' in c ? (c as { value: string }).value : 'tagName' in c ? text(c as Element) : ''))
    .join('');

/** Lays the table out on a grid honouring rowspan and colspan: every row must come out equally wide. */
function layout(html: string): string[][] {
  const trs = elements(parseFragment(html) as unknown as Node, 'tr');
  const grid: string[][] = trs.map(() => []);
  trs.forEach((tr, r) => {
    let col = 0;
    for (const cell of tr.childNodes.filter((c): c is Element => 'tagName' in c)) {
      while (grid[r][col] !== undefined) col++;
      const rs = Number(attr(cell, 'rowspan') ?? 1);
      const cs = Number(attr(cell, 'colspan') ?? 1);
      for (let i = 0; i < rs; i++) for (let j = 0; j < cs; j++) grid[r + i][col + j] = text(cell);
      col += cs;
    }
  });
  return grid;
}

describe('the table renderers over subtotals on both axes', () => {
  it.each([
    [
      ['a', 'b', 'c'],
      ['x', 'y'],
    ],
    [['a', 'b'], ['x']],
    [['a'], ['x', 'y']],
    [['a', 'b', 'c'], []],
  ])('HTML: rows %j by columns %j lay out as a rectangle, every value under its headers', (rows, columns) => {
    const s = spec(rows, columns);
    const table = buildPivotTable(s, groupsFor(s));
    const html = renderHtml(table);
    const grid = layout(html);
    const width = grid[0].length;
    expect(grid.every((r) => r.length === width && r.every((c) => c !== undefined))).toBe(true);
    const headerRows = Math.max(columns.length, 1);
    // The body: each line is its row key's headers (a subtotal's "<value> Total" spanning the inner
    // levels), then one value per column key and the Total.
    table.rows.forEach((key, i) => {
      const line = grid[headerRows + i];
      const head = key.map((v) => String(v));
      if (key.length < rows.length) head[key.length - 1] += ' Total';
      while (head.length < rows.length) head.push(head[head.length - 1]);
      expect(line.slice(0, rows.length)).toEqual(head);
      const values = [...table.columns.map((c) => table.at(key, c)[0]), table.at(key, [])[0]].map((v) =>
        v === null ? '' : String(v),
      );
      expect(line.slice(rows.length)).toEqual(values);
    });
    // The column headers above each value name its key; a subtotal column reads "<value> Total".
    table.columns.forEach((key, j) => {
      const head = grid.slice(0, columns.length).map((line) => line[rows.length + j]);
      const want = key.map((v) => String(v));
      if (key.length < columns.length) want[key.length - 1] += ' Total';
      while (want.length < columns.length) want.push(want[want.length - 1]);
      expect(head).toEqual(want);
    });
    expect(html).toContain('&lt;East&gt;');
    expect(html).not.toContain('<East>');
    const subtotalRows = elements(parseFragment(html) as unknown as Node, 'tr').filter(
      (tr) => attr(tr, 'class') === 'quarry-subtotal',
    );
    expect(subtotalRows).toHaveLength(table.rows.filter((k) => k.length < rows.length).length);
  });

  it('HTML: a binned or date-grouped axis labels its keys and subtotals by its own axis, rows and columns alike', () => {
    const binned = {
      ...plainAxis({ name: 'x', type: 'number' }),
      bin: { width: 30, origin: 0 },
      keyType: 'number' as const,
    };
    const s = spec(['a'], [], { columns: [binned, plainAxis({ name: 'y', type: 'string' })] });
    const groups: GroupRow[] = [
      { rowKey: ['r'], columnKey: [0, 'p'], values: [1] },
      { rowKey: ['r'], columnKey: [0], values: [1] },
      { rowKey: ['r'], columnKey: [], values: [1] },
      { rowKey: [], columnKey: [0, 'p'], values: [1] },
      { rowKey: [], columnKey: [0], values: [1] },
      { rowKey: [], columnKey: [], values: [1] },
    ];
    const grid = layout(renderHtml(buildPivotTable(s, groups)));
    expect(grid[0]).toEqual(expect.arrayContaining(['[0, 30)', '[0, 30) Total']));
    const rowsBinned = spec([], [], { rows: [binned], columns: [] });
    const byRow: GroupRow[] = [
      { rowKey: [30], columnKey: [], values: [2] },
      { rowKey: [], columnKey: [], values: [2] },
    ];
    expect(layout(renderHtml(buildPivotTable(rowsBinned, byRow))).map((line) => line[0])).toContain('[30, 60)');
  });

  it('CSV: one line per JSON row with the same numbers, a Total line, RFC 4180 quoting', () => {
    const s = spec(['a', 'b'], ['x', 'y']);
    const table = buildPivotTable(s, groupsFor(s));
    const csv = renderCsv(table);
    expect(csv.endsWith('\r\n')).toBe(true);
    const lines = parse(csv) as string[][];
    const json = JSON.parse(renderJson(table)) as {
      rows: Array<{ key: string[]; cells: number[][]; total: number[]; subtotal?: boolean }>;
      columnTotals: number[][];
      grandTotal: number[];
    };
    expect(lines[0].slice(0, 4)).toEqual(['a', 'b', 'X1 / y1 | Sum <amount>', 'X1 / y2 | Sum <amount>']);
    expect(lines[0]).toContain('X1 Total | Sum <amount>');
    expect(lines[0][lines[0].length - 1]).toBe('Total | Sum <amount>');
    expect(lines).toHaveLength(json.rows.length + 2);
    json.rows.forEach((row, i) => {
      expect(lines[i + 1].slice(2).map(Number)).toEqual([...row.cells.flat(), ...row.total]);
      expect(lines[i + 1].slice(0, 2)).toEqual(row.subtotal ? [`${row.key[0]} Total`, ''] : row.key);
    });
    expect(lines[lines.length - 1]).toEqual([
      'Total',
      '',
      ...[...json.columnTotals.flat(), ...json.grandTotal].map(String),
    ]);
  });

  it('order by value with a limit cuts the outermost level only; subtotals follow the kept groups', () => {
    const s = spec(['a', 'b'], ['x'], { rowOrder: { by: 'value', measure: 0, direction: 'desc' }, rowLimit: 1 });
    const table = buildPivotTable(s, groupsFor(s));
    // West's records all weigh 1 more than <East>'s: West is first and alone.
    expect(table.rows).toEqual([['West', 'q'], ['West', 'p'], ['West']]);
    expect([table.rowsOmitted, table.outerRows]).toEqual([1, 2]);
    expect(table.at([], [])[0]).toBe(RECORDS.reduce((a, r) => a + r.amount, 0));
  });

  it('CSV: a label or name a spreadsheet would run as a formula is defused; numbers and plain text are not touched', () => {
    const s = spec(['a'], ['x'], { subtotals: false, totals: [{ ...SUM, name: '@SUM(A1)' }] });
    const keys: AxisValue[] = ['=HYPERLINK("http://evil","x")', '+1+2', '-cmd', '\tTAB', 'plain', -5, 2.5];
    const groups: GroupRow[] = [];
    keys.forEach((k, i) => {
      groups.push({ rowKey: [k], columnKey: ['-x'], values: [i] }, { rowKey: [k], columnKey: [], values: [i] });
    });
    groups.push({ rowKey: [], columnKey: ['-x'], values: [21] }, { rowKey: [], columnKey: [], values: [21] });
    const lines = parse(
      renderCsv(buildPivotTable({ ...s, rows: [plainAxis({ name: 'a', type: 'string' })] }, groups)),
    ) as string[][];
    expect(lines[0]).toEqual(['a', "'-x | @SUM(A1)", 'Total | @SUM(A1)']);
    const labels = lines.slice(1, -1).map((l) => l[0]);
    expect(labels).toEqual(
      expect.arrayContaining(['\'=HYPERLINK("http://evil","x")', "'+1+2", "'-cmd", "'\tTAB", 'plain', '-5', '2.5']),
    );
    expect(labels.filter((l) => /^[=+\-@\t]/.test(l) && !/^-?\d/.test(l))).toEqual([]);
  });
});

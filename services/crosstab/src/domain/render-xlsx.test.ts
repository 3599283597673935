import ExcelJS from 'exceljs';
import { plainAxis, specWith } from '../../test-support/crosstab-input';
import * as XLSX from 'xlsx';
import type { FieldDef } from '@quarry/query-language';
import type { AxisValue, GroupRow } from './axis-value';
import { pivotLevels, type CrosstabSpec, type TotalSpec } from './crosstab-spec';
import { buildPivotTable, type PivotTable } from './pivot-table';
import { renderXlsx, sheetName } from './render-xlsx';

const field = (name: string): FieldDef => ({ name, type: 'string' }) as FieldDef;

/** Records with formula-looking labels; amounts reach the thousands so the separators show. */
const A = ['=1+1', '@SUM(A1)', 'West'];
const B = ['p', '-2+3'];
const X = ['X1', 'X2'];
const Y = ['y1', 'y2'];
const RECORDS: Array<{ a: string; b: string; x: string; y: string; amount: number }> = [];
A.forEach((a, i) =>
  B.forEach((b, j) =>
    X.forEach((x, k) =>
      Y.forEach((y, l) => RECORDS.push({ a, b, x, y, amount: 1000.1 * (1 + i) + 250 * j + 3 * k + 7 * l })),
    ),
  ),
);

/** The groups an engine would return: sums and counts at every level the spec asks. */
function groupsFor(spec: CrosstabSpec): GroupRow[] {
  const rows = spec.rows.map((f) => f.field.name) as Array<'a' | 'b'>;
  const cols = spec.columns.map((c) => c.field.name) as Array<'x' | 'y'>;
  const out = new Map<string, GroupRow>();
  for (const [r, c] of pivotLevels(spec)) {
    for (const rec of RECORDS) {
      const rowKey: AxisValue[] = rows.slice(0, r).map((f) => rec[f]);
      const columnKey: AxisValue[] = cols.slice(0, c).map((f) => rec[f]);
      const k = JSON.stringify([rowKey, columnKey]);
      const g = out.get(k) ?? { rowKey, columnKey, values: spec.totals.map(() => 0) };
      g.values = g.values.map((v, m) => (v ?? 0) + (spec.totals[m].aggregation === 'Count' ? 1 : rec.amount));
      out.set(k, g);
    }
  }
  return [...out.values()];
}

const SUM: TotalSpec = {
  aggregation: 'Sum',
  field: { name: 'amount', type: 'number' } as FieldDef,
  name: 'Sum',
  showAs: 'value',
};
const COUNT: TotalSpec = { aggregation: 'Count', name: 'Count', showAs: 'value' };
const SHARE: TotalSpec = { ...SUM, name: 'Share', showAs: 'percentOfGrandTotal' };

function spec(rows: string[], columns: string[], totals: TotalSpec[]): CrosstabSpec {
  return specWith({
    rows: rows.map((r) => plainAxis(field(r))),
    columns: columns.map((c) => plainAxis(field(c))),
    totals,
    subtotals: true,
  });
}

const label = (v: AxisValue) => String(v);
const colName = (c: number) => XLSX.utils.encode_col(c - 1);

/** The expected layout, from the pivot table alone: where each label and number belongs. */
function expectedCells(table: PivotTable): Map<string, string | number> {
  const { spec: s } = table;
  const t = s.totals.length;
  const R = s.rows.length;
  const C = s.columns.length;
  const headerRows = C + (t > 1 || C === 0 ? 1 : 0);
  const out = new Map<string, string | number>();
  const put = (r: number, c: number, v: string | number | null) => {
    if (v !== null) out.set(`${colName(c)}${r}`, v);
  };
  s.rows.forEach((f, i) => put(1, i + 1, f.name));
  const value = (m: number, v: number | null) => (v === null ? null : s.totals[m].showAs === 'value' ? v : v / 100);
  const line = (r: number, key: AxisValue[]) => {
    table.columns.forEach((c, j) => table.at(key, c).forEach((v, m) => put(r, R + 1 + j * t + m, value(m, v))));
    table.at(key, []).forEach((v, m) => put(r, R + 1 + table.columns.length * t + m, value(m, v)));
  };
  table.rows.forEach((key, i) => {
    const r = headerRows + 1 + i;
    // A row's own innermost label, or "<value> Total" at a subtotal's level.
    const level = key.length - 1;
    put(r, level + 1, key.length < R ? `${label(key[level])} Total` : label(key[level]));
    line(r, key);
  });
  const last = headerRows + table.rows.length + 1;
  put(last, 1, 'Total');
  line(last, []);
  // The column headers: each column key's label at its own level, a subtotal's "<value> Total".
  table.columns.forEach((key, j) => {
    const level = key.length - 1;
    if (key.length === C || key.length < C) {
      const first = table.columns.findIndex(
        (k) => JSON.stringify(k.slice(0, level + 1)) === JSON.stringify(key.slice(0, level + 1)),
      );
      if (key.length < C) put(level + 1, R + 1 + j * t, `${label(key[level])} Total`);
      else if (first === j || table.columns[j - 1].length < C) put(level + 1, R + 1 + j * t, label(key[level]));
    }
  });
  if (C > 0) put(1, R + 1 + table.columns.length * t, 'Total');
  return out;
}

async function read(buf: Buffer) {
  const wb = XLSX.read(buf, { type: 'buffer', cellNF: true, cellFormula: true });
  const second = new ExcelJS.Workbook();
  await second.xlsx.load(buf as unknown as ArrayBuffer);
  return { wb, sheet: wb.Sheets[wb.SheetNames[0]], second: second.worksheets[0] };
}

describe('renderXlsx, read back with SheetJS (values, merges, formats) and exceljs (bold, panes)', () => {
  const cases: Array<[string, CrosstabSpec]> = [
    ['rows a,b by columns x,y, two totals', spec(['a', 'b'], ['x', 'y'], [SUM, COUNT])],
    ['rows a,b by column x, a share', spec(['a', 'b'], ['x'], [SHARE])],
    ['rows a,b, no columns', spec(['a', 'b'], [], [SUM])],
  ];

  it.each(cases)('%s: every label and number where the HTML table has it', async (_name, s) => {
    const table = buildPivotTable(s, groupsFor(s));
    const { wb, sheet } = await read(await renderXlsx(table, 'movies'));
    expect(wb.SheetNames).toEqual(['movies']);
    const want = expectedCells(table);
    expect(want.size).toBeGreaterThan(10);
    for (const [ref, v] of want) {
      const cell = sheet[ref] as XLSX.CellObject | undefined;
      expect([ref, typeof v === 'number' ? cell?.t : cell?.t]).toEqual([ref, typeof v === 'number' ? 'n' : 's']);
      if (typeof v === 'number') expect([ref, cell?.v as number]).toEqual([ref, expect.closeTo(v, 9)]);
      else expect([ref, cell?.v]).toEqual([ref, v]);
    }
    // Every number in the sheet is one of the table's (nothing extra), and no cell is a formula.
    const numbersInSheet = Object.keys(sheet).filter(
      (k) => !k.startsWith('!') && (sheet[k] as XLSX.CellObject).t === 'n',
    );
    expect(numbersInSheet.sort()).toEqual(
      [...want]
        .filter(([, v]) => typeof v === 'number')
        .map(([k]) => k)
        .sort(),
    );
    expect(Object.keys(sheet).filter((k) => !k.startsWith('!') && (sheet[k] as XLSX.CellObject).f)).toEqual([]);
  });

  it('formula-looking labels are string cells holding the text as it is', async () => {
    const s = spec(['a', 'b'], ['x'], [SUM]);
    const { sheet } = await read(await renderXlsx(buildPivotTable(s, groupsFor(s)), 'm'));
    const strings = Object.keys(sheet)
      .filter((k) => !k.startsWith('!'))
      .map((k) => sheet[k] as XLSX.CellObject)
      .filter((c) => c.t === 's')
      .map((c) => c.v);
    expect(strings).toEqual(expect.arrayContaining(['=1+1', '@SUM(A1)', '-2+3', '=1+1 Total', '@SUM(A1) Total']));
  });

  it('merges nested column headers over their columns, row labels down their groups, Total across the row fields', async () => {
    const s = spec(['a', 'b'], ['x', 'y'], [SUM, COUNT]);
    const table = buildPivotTable(s, groupsFor(s));
    const { sheet } = await read(await renderXlsx(table, 'm'));
    const merges = (sheet['!merges'] ?? []).map((m) => XLSX.utils.encode_range(m));
    // Header rows: x (1), y (2), the totals' names (3). Row fields A and B, each down the three.
    expect(merges).toEqual(expect.arrayContaining(['A1:A3', 'B1:B3']));
    // X1 spans y1 and y2 (2 × 2 totals); "X1 Total" spans the two column levels.
    expect(merges).toEqual(expect.arrayContaining(['C1:F1', 'G1:H2']));
    expect((sheet.C1 as XLSX.CellObject).v).toBe('X1');
    expect((sheet.G1 as XLSX.CellObject).v).toBe('X1 Total');
    // y1 under X1: 2 totals wide.
    expect(merges).toContain('C2:D2');
    // Total column at the end: 2 wide, 2 rows down.
    const totalCol = 3 + table.columns.length * 2;
    expect(merges).toContain(`${colName(totalCol)}1:${colName(totalCol + 1)}2`);
    // First row group "=1+1" spans its two b values; its subtotal row spans both row-label columns.
    expect(merges).toEqual(expect.arrayContaining(['A4:A5', 'A6:B6']));
    const last = 3 + table.rows.length + 1;
    expect(merges).toContain(`A${last}:B${last}`);
  });

  it('subtotal rows and the Total row are bold, other rows are not; header rows and label columns are frozen', async () => {
    const s = spec(['a', 'b'], ['x'], [SUM, COUNT]);
    const table = buildPivotTable(s, groupsFor(s));
    const { second } = await read(await renderXlsx(table, 'm'));
    const headerRows = 2;
    table.rows.forEach((key, i) => {
      const r = headerRows + 1 + i;
      const boldCells = [3, 4, 5].map((c) => second.getCell(r, c).font?.bold === true);
      expect([key, boldCells]).toEqual([key, key.length < 2 ? [true, true, true] : [false, false, false]]);
    });
    const last = headerRows + table.rows.length + 1;
    expect(second.getCell(last, 1).value).toBe('Total');
    expect(second.getCell(last, 1).font?.bold).toBe(true);
    expect(second.getCell(last, 3).font?.bold).toBe(true);
    expect(second.views[0]).toMatchObject({ state: 'frozen', xSplit: 2, ySplit: 2 });
  });

  it('number formats: thousands separators, whole counts without decimals, shares as 0.0% of a fraction', async () => {
    const s = spec(['a'], ['x'], [SUM, COUNT, SHARE]);
    const table = buildPivotTable(s, groupsFor(s));
    const { sheet } = await read(await renderXlsx(table, 'm'));
    // Row 3 is the first data row; columns B..D are X1's Sum, Count, Share.
    expect((sheet.B3 as XLSX.CellObject).z).toBe('#,##0.00');
    expect((sheet.C3 as XLSX.CellObject).z).toBe('#,##0');
    expect((sheet.D3 as XLSX.CellObject).z).toBe('0.0%');
    expect((sheet.D3 as XLSX.CellObject).v).toBeCloseTo(table.at(table.rows[0], table.columns[0])[2]! / 100, 12);
    expect((sheet.B3 as XLSX.CellObject).w).toMatch(/^\d{1,3}(,\d{3})+\.\d\d$/);
    expect((sheet.D3 as XLSX.CellObject).w).toMatch(/^\d+\.\d%$/);
  });

  it.each([
    ['totals on columns', 'columns' as const],
    ['totals on rows', 'rows' as const],
  ])('%s: subtotal groups are outline groups that fold into their subtotal; none without subtotals', async (_n, on) => {
    const s = { ...spec(['a', 'b'], ['x', 'y'], [SUM, COUNT]), totalsOn: on };
    const table = buildPivotTable(s, groupsFor(s));
    const { second } = await read(await renderXlsx(table, 'm'));
    const T = on === 'rows' ? 2 : 1;
    const headerRows = on === 'rows' ? 2 : 3;
    const levels = table.rows.flatMap((key) => Array<number>(T).fill(key.length < 2 ? 0 : 1));
    const read_ = levels.map((_, i) => second.getRow(headerRows + 1 + i).outlineLevel ?? 0);
    expect(read_).toEqual(levels);
    expect(levels.filter((l) => l === 0).length).toBe(A.length * T);
    // The Total row is outside every group.
    expect(second.getRow(headerRows + 1 + levels.length).outlineLevel ?? 0).toBe(0);
    const perColumn = on === 'rows' ? 1 : 2;
    const firstValueColumn = on === 'rows' ? 4 : 3;
    const columnLevels = table.columns.flatMap((key) => Array<number>(perColumn).fill(key.length < 2 ? 0 : 1));
    expect(columnLevels.map((_, j) => second.getColumn(firstValueColumn + j).outlineLevel ?? 0)).toEqual(columnLevels);
    expect(second.properties.outlineLevelRow).toBe(1);
    expect(second.properties.outlineLevelCol).toBe(1);

    const flat = { ...s, subtotals: false };
    const plain = (await read(await renderXlsx(buildPivotTable(flat, groupsFor(flat)), 'm'))).second;
    const all: number[] = [];
    plain.eachRow((row) => all.push(row.outlineLevel ?? 0));
    expect(all.every((l) => l === 0)).toBe(true);
  });

  it.each([
    ['movies', 'movies'],
    ['a/b:c*d?e[f]g\\h', 'a_b_c_d_e_f_g_h'],
    ["'quoted'", 'quoted'],
    ['x'.repeat(40), 'x'.repeat(31)],
    ['History', 'History_'],
    ['', 'Crosstab'],
  ])('sheet name for index %j is %j', (index, want) => {
    expect(sheetName(index)).toBe(want);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import * as XLSX from 'xlsx';
import { createIdentity, type Identity } from './support/identities';
import { runCli } from './support/quarry-process';
import { startStackWithData, type Stack } from './support/stack';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

interface TableData {
  contentType: string;
  data: string;
  rowCount: number;
  columnCount: number;
  rowsOmitted?: number;
  columnsOmitted?: number;
}

interface JsonTable {
  rowFields: string[];
  columnFields: string[];
  measures: Array<{ name: string }>;
  columns: unknown[][];
  rows: Array<{ key: unknown[]; cells: Array<Array<number | null>>; total: Array<number | null>; subtotal?: boolean }>;
  columnTotals: Array<Array<number | null>>;
  grandTotal: Array<number | null>;
}

/** Labels a record could carry that break CSV lines or run as spreadsheet formulas. */
const HOSTILE = [
  'two\nlines',
  'cr\rhere',
  'say "hi", ok',
  '=HYPERLINK("http://evil.example","x")',
  '-2+3',
  '@x',
  '\ttab',
];
const defused = (label: string) => (/^[=+\-@\t\r]/.test(label) ? `'${label}` : label);

describe('CROSSTAB.EXECUTE as XLSX and CSV, read back by a second reader', () => {
  let stack: Stack;
  let analyst: Identity;
  let tmp: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-export-'));
    const records = HOSTILE.flatMap((label, i) => [
      { label, side: i % 2 ? '=left' : 'right', amount: -1.5 * (i + 1) },
      { label, side: 'right', amount: 1000 * (i + 1) },
    ]);
    fs.writeFileSync(path.join(tmp, 'hostile.json'), JSON.stringify(records));
    stack = await startStackWithData({
      extra: async (env) => {
        const r = await runCli(['index', 'load', 'hostile', path.join(tmp, 'hostile.json')], env);
        if (r.code !== 0) throw new Error(r.stderr);
      },
    });
    analyst = await createIdentity(stack.dataDir, 'analyst', { indexes: '*' });
  }, 120000);

  afterAll(async () => {
    await stack?.quarry.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function crosstab<T>(params: Record<string, unknown>): Promise<T> {
    const res = await stack.call<T>(analyst, 'CROSSTAB.EXECUTE', params);
    if (res.error) throw new Error(JSON.stringify(res.error));
    return res.data as T;
  }

  const movies = {
    index: 'movies',
    query: '*',
    rows: ['Major Genre', 'MPAA Rating'],
    columns: [{ field: 'Creative Type' }],
    totals: [
      { aggregationType: 'Sum', field: 'Worldwide Gross' },
      { aggregationType: 'Average', field: 'IMDB Rating' },
      { aggregationType: 'Count', showAs: 'percentOfGrandTotal' },
    ],
    subtotals: true,
  };

  it('every number of the workbook is the JSON answer’s, in the place the HTML table shows it', async () => {
    const json = (await crosstab<{ data: JsonTable }>({ ...movies, format: 'json' })).data;
    const xlsx = await crosstab<TableData>({ ...movies, format: 'xlsx' });
    expect(xlsx.contentType).toBe(XLSX_TYPE);
    expect(xlsx.rowCount).toBe(json.rows.length);
    const wb = XLSX.read(Buffer.from(xlsx.data, 'base64'), { type: 'buffer' });
    expect(wb.SheetNames).toEqual(['movies']);
    const grid = XLSX.utils.sheet_to_json<unknown[]>(wb.Sheets.movies, { header: 1, raw: true, defval: null });
    const t = json.measures.length;
    const R = json.rowFields.length;
    const headerRows = json.columnFields.length + 1;
    const shown = (values: Array<number | null>) =>
      values.map((v, i) => (v === null ? null : i % t === 2 ? v / 100 : v)); // the share as a fraction
    const close = (got: unknown[], want: Array<number | null>) => {
      expect(got).toHaveLength(want.length);
      got.forEach((g, i) => {
        if (want[i] === null) expect(g).toBeNull();
        else expect(g as number).toBeCloseTo(want[i]!, 9);
      });
    };
    json.rows.forEach((row, i) => {
      const line = grid[headerRows + i];
      close(line.slice(R), shown([...row.cells.flat(), ...row.total]));
    });
    const last = grid[headerRows + json.rows.length];
    expect(last[0]).toBe('Total');
    close(last.slice(R), shown([...json.columnTotals.flat(), ...json.grandTotal]));
    expect(grid).toHaveLength(headerRows + json.rows.length + 1);
  });

  it('limits report what they left out, as html and csv do', async () => {
    const data = await crosstab<TableData>({ ...movies, format: 'xlsx', rowLimit: 2 });
    expect(data).toMatchObject({ contentType: XLSX_TYPE, rowsOmitted: expect.any(Number), columnsOmitted: 0 });
    expect(data.rowsOmitted).toBeGreaterThan(0);
  });

  it('hostile labels: text cells in the workbook, never formulas', async () => {
    const data = await crosstab<TableData>({
      index: 'hostile',
      rows: ['label'],
      columns: [{ field: 'side' }],
      totals: [{ aggregationType: 'Sum', field: 'amount' }],
      format: 'xlsx',
    });
    const wb = XLSX.read(Buffer.from(data.data, 'base64'), { type: 'buffer', cellFormula: true });
    const sheet = wb.Sheets.hostile;
    const cells = Object.keys(sheet)
      .filter((k) => !k.startsWith('!'))
      .map((k) => sheet[k] as XLSX.CellObject);
    expect(cells.filter((c) => c.f)).toEqual([]);
    const strings = cells.filter((c) => c.t === 's').map((c) => c.v);
    expect(strings).toEqual(expect.arrayContaining([...HOSTILE, '=left']));
  });

  it('xlsx with chartType is a 400 naming format', async () => {
    const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', { ...movies, format: 'xlsx', chartType: 'Column2D' });
    expect(res.error?.code).toBe(400);
    expect(JSON.stringify(res.error?.data)).toMatch(/format/);
  });

  it('a report saved with format xlsx re-runs as xlsx', async () => {
    const saved = await crosstab<TableData & { report: { guid: string } }>({
      ...movies,
      format: 'xlsx',
      saveReport: { name: 'Genres as Excel' },
    });
    const meta = await stack.call<{ method: string; params: Record<string, unknown> }>(analyst, 'REPORTS.METADATA', {
      guid: saved.report.guid,
    });
    expect(meta.data!.params).toMatchObject({ format: 'xlsx' });
    const again = await crosstab<TableData>(meta.data!.params);
    expect(again.contentType).toBe(XLSX_TYPE);
    const numbers = (b64: string) =>
      XLSX.utils.sheet_to_json<unknown[]>(XLSX.read(Buffer.from(b64, 'base64')).Sheets.movies, { header: 1 });
    expect(numbers(again.data)).toEqual(numbers(saved.data));
  });

  it('CSV with hostile labels: one line per row, labels defused, numbers as the JSON answer has them', async () => {
    const params = {
      index: 'hostile',
      rows: ['label'],
      columns: [{ field: 'side' }],
      totals: [{ aggregationType: 'Sum', field: 'amount' }],
    };
    const json = (await crosstab<{ data: JsonTable }>({ ...params, format: 'json' })).data;
    const csv = await crosstab<TableData>({ ...params, format: 'csv' });
    expect(csv.contentType).toBe('text/csv');
    const lines = parse(csv.data) as string[][];
    expect(lines).toHaveLength(json.rows.length + 2);
    expect(lines[0]).toEqual(['label', "'=left | Sum (amount)", 'right | Sum (amount)', 'Total | Sum (amount)']);
    json.rows.forEach((row, i) => {
      expect(lines[i + 1][0]).toBe(defused(String(row.key[0])));
      expect(lines[i + 1].slice(1).map((v) => (v === '' ? null : Number(v)))).toEqual([
        ...row.cells.flat(),
        ...row.total,
      ]);
    });
    expect(lines.slice(1, -1).map((l) => l[0])).toEqual(expect.arrayContaining(HOSTILE.map(defused)));
    // Negative numbers stay numbers (the '=left' cells of odd labels are a lone negative amount).
    expect(lines.flat()).toEqual(expect.arrayContaining(['-3', '-6', '-9']));
    expect(lines.slice(1).flatMap((l) => l.slice(1).filter((v) => v.startsWith("'")))).toEqual([]);
  });
});

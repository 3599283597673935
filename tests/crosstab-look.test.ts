import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { reviveChartOption } from '@quarry/client';
import * as XLSX from 'xlsx';
import { attr, parseTable } from './support/html-table';
import { runCli } from './support/quarry-process';
import { useStackWithAnalyst } from './support/stack';

/*
 * A total's format and colours, end to end: the numbers each output writes are computed here from the
 * records with Intl, and the colours from the rules, not read back from Quarry's own code.
 */

const REGIONS = ['North', 'South', 'West'];
const PRODUCTS = ['bolts', 'nuts'];
const RECORDS = REGIONS.flatMap((region, i) =>
  PRODUCTS.flatMap((product, j) =>
    Array.from({ length: 3 + i + j }, (_, k) => ({
      region,
      product,
      amount: 1234.567 * (i + 1) + 99.5 * j + k * 0.25,
    })),
  ),
);
const sumOf = (pred: (r: (typeof RECORDS)[number]) => boolean) =>
  RECORDS.filter(pred).reduce((s, r) => s + r.amount, 0);
const countOf = (pred: (r: (typeof RECORDS)[number]) => boolean) => RECORDS.filter(pred).length;
const GRAND = sumOf(() => true);

let tmp: string;
const { stack, analyst } = useStackWithAnalyst({
  extra: async (env) => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-look-'));
    fs.writeFileSync(path.join(tmp, 'sales.json'), JSON.stringify(RECORDS));
    const r = await runCli(['index', 'load', 'sales', path.join(tmp, 'sales.json')], env);
    if (r.code !== 0) throw new Error(r.stderr);
  },
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Table {
  contentType: string;
  data: string;
}

const EUR = { style: 'currency', currency: 'eur', maximumFractionDigits: 0 } as const;
const RED = '#d62728';
const TOTALS = [
  {
    aggregationType: 'Sum',
    field: 'amount',
    name: 'Revenue',
    format: EUR,
    highlight: [{ when: { op: '>', value: 5000 }, color: RED }],
  },
  { aggregationType: 'Count', name: 'Orders', colorScale: { from: '#ffffff', to: '#08306b' } },
  {
    aggregationType: 'Sum',
    field: 'amount',
    name: 'Share',
    showAs: 'percentOfGrandTotal',
    format: { minimumFractionDigits: 1, maximumFractionDigits: 1 },
  },
];
const PARAMS = { index: 'sales', rows: ['region'], columns: [{ field: 'product' }], totals: TOTALS };

const euro = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR', maximumFractionDigits: 0 });
const share = new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};

async function crosstab<T>(params: Record<string, unknown>): Promise<T> {
  const res = await stack().call<T>(analyst(), 'CROSSTAB.EXECUTE', params);
  if (res.error) throw new Error(JSON.stringify(res.error));
  return res.data as T;
}

describe('CROSSTAB.EXECUTE totals with format, highlight and colorScale', () => {
  it('HTML writes each value in its format and colours the cells the rules pick, with readable text', async () => {
    const { data } = await crosstab<Table>(PARAMS);
    const t = parseTable(data);
    // Body rows: one per region; columns: region, then (bolts, nuts, Total) × (Revenue, Orders, Share).
    expect(t.body.map((r) => r[0])).toEqual(REGIONS);
    REGIONS.forEach((region, i) => {
      [...PRODUCTS, null].forEach((product, j) => {
        const pred = (r: (typeof RECORDS)[number]) =>
          r.region === region && (product === null || r.product === product);
        const revenue = sumOf(pred);
        const at = 1 + j * 3;
        expect(t.body[i][at]).toBe(euro.format(revenue));
        expect(t.body[i][at + 1]).toBe(String(countOf(pred)));
        expect(t.body[i][at + 2]).toBe(share.format(revenue / GRAND));
        const style = attr(t.cells.body[i][at], 'style');
        // The Total column beside column fields stays plain.
        if (product !== null && revenue > 5000) {
          expect(style).toMatch(new RegExp(`^background:${RED};color:(#000000|#ffffff)$`));
          const text = /color:(#[0-9a-f]{6})$/.exec(style ?? '')![1];
          expect(contrast(RED, text)).toBeGreaterThanOrEqual(4.5);
        } else expect(style).toBeUndefined();
      });
    });
    // The grand total row: formatted, never coloured.
    expect(t.foot[0][1 + 6]).toBe(euro.format(GRAND));
    expect(t.cells.foot[0].some((c) => attr(c, 'style') !== undefined)).toBe(false);

    // The colour scale: the fewest orders palest, the most darkest, every text readable.
    const orders = REGIONS.flatMap((region, i) =>
      PRODUCTS.map((product, j) => ({
        n: countOf((r) => r.region === region && r.product === product),
        style: attr(t.cells.body[i][1 + j * 3 + 1], 'style') ?? '',
      })),
    );
    const bg = (s: string) => /background:(#[0-9a-f]{6})/.exec(s)![1];
    const fewest = orders.reduce((a, b) => (b.n < a.n ? b : a));
    const most = orders.reduce((a, b) => (b.n > a.n ? b : a));
    expect(bg(fewest.style)).toBe('#ffffff');
    expect(bg(most.style)).toBe('#08306b');
    for (const o of orders) {
      const [, back, fore] = /background:(#[0-9a-f]{6});color:(#[0-9a-f]{6})/.exec(o.style)!;
      expect(contrast(back, fore)).toBeGreaterThanOrEqual(4.5);
    }
    // Darker as the count grows.
    const sorted = [...orders].sort((a, b) => a.n - b.n).map((o) => luminance(bg(o.style)));
    for (let k = 1; k < sorted.length; k++) expect(sorted[k]).toBeLessThanOrEqual(sorted[k - 1]);
  });

  it('XLSX: numbers stay numbers, with the Excel format that writes them as Intl does, and the same fills', async () => {
    const { data } = await crosstab<Table>({ ...PARAMS, format: 'xlsx' });
    const buf = Buffer.from(data, 'base64');
    const sheet = XLSX.read(buf, { type: 'buffer', cellNF: true }).Sheets.sales;
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(buf as unknown as ArrayBuffer);
    const ws = book.worksheets[0];
    // Header rows: product, then the totals' names; North is on row 3.
    REGIONS.forEach((region, i) => {
      PRODUCTS.forEach((product, j) => {
        const pred = (r: (typeof RECORDS)[number]) => r.region === region && r.product === product;
        const revenue = sumOf(pred);
        const ref = (col: number) => `${XLSX.utils.encode_col(col)}${3 + i}`;
        const cell = sheet[ref(1 + j * 3)] as XLSX.CellObject;
        expect(cell.t).toBe('n');
        expect(cell.v as number).toBeCloseTo(revenue, 6);
        expect(cell.w).toBe(euro.format(revenue));
        const shareCell = sheet[ref(3 + j * 3)] as XLSX.CellObject;
        expect(shareCell.v as number).toBeCloseTo(revenue / GRAND, 12);
        expect(shareCell.w).toBe(share.format(revenue / GRAND));
        const fill = ws.getCell(3 + i, 2 + j * 3).fill as ExcelJS.FillPattern | undefined;
        if (revenue > 5000) expect(fill?.fgColor?.argb).toBe(`FF${RED.slice(1).toUpperCase()}`);
        else expect(fill?.fgColor).toBeUndefined();
      });
    });
  });

  it('JSON keeps raw numbers and echoes each look as sent, its defaults filled', async () => {
    const { data: table } = await crosstab<{
      data: { measures: Array<Record<string, unknown>>; rows: Array<{ cells: Array<Array<number | null>> }> };
    }>({ ...PARAMS, format: 'json' });
    expect(table.measures[0]).toMatchObject({
      name: 'Revenue',
      format: { ...EUR, notation: 'standard' },
      highlight: TOTALS[0].highlight,
    });
    expect(table.measures[1]).toMatchObject({ colorScale: TOTALS[1].colorScale });
    expect(table.measures[1].format).toBeUndefined();
    expect(table.rows[0].cells[0][0]).toBeCloseTo(
      sumOf((r) => r.region === 'North' && r.product === 'bolts'),
      9,
    );
  });

  it("charts write a total's axis in its format, compactly; the PNG draws", async () => {
    const params = {
      index: 'sales',
      rows: ['region'],
      totals: [{ aggregationType: 'Sum', field: 'amount', format: { style: 'currency', currency: 'EUR' } }],
      chartType: 'Column2D',
    };
    const { data: option } = await crosstab<{ data: Record<string, Record<string, unknown>> }>({
      ...params,
      imageFormat: 'echarts',
    });
    const revived = reviveChartOption(option) as unknown as { yAxis: { axisLabel: { formatter(v: number): string } } };
    const compactEuro = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: 'EUR',
      notation: 'compact',
      maximumSignificantDigits: 3,
    });
    for (const v of [0, 2500, GRAND]) expect(revived.yAxis.axisLabel.formatter(v)).toBe(compactEuro.format(v));
    const { data: png } = await crosstab<{ data: string }>(params);
    const bytes = Buffer.from(png, 'base64');
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    fs.mkdirSync('test-output/charts', { recursive: true });
    fs.writeFileSync('test-output/charts/formatted-axis.png', bytes);
  });

  it.each([
    [{ format: { style: 'currency' } }, /totals\[0\]\.format\.currency is required with style currency/],
    [{ format: { currency: 'EUR' } }, /totals\[0\]\.format\.currency goes with style currency only/],
    [{ format: { style: 'currency', currency: 'XYZ' } }, /totals\[0\]\.format\.currency: "XYZ" is not an ISO 4217/],
    [{ format: { style: 'currency', currency: 'euro' } }, /totals\[0\]\.format\.currency must be an ISO 4217/],
    [{ format: { style: 'unit', unit: 'furlong' } }, /totals\[0\]\.format\.unit: "furlong" is not a unit/],
    [{ format: { style: 'unit' } }, /totals\[0\]\.format\.unit is required with style unit/],
    [
      { format: { minimumFractionDigits: 3, maximumFractionDigits: 1 } },
      /totals\[0\]\.format\.maximumFractionDigits must be at least minimumFractionDigits/,
    ],
    // Alone: a digit count out of range is not also blamed on a unit the format does not have.
    [
      { format: { maximumFractionDigits: 21 } },
      /^totals\[0\]\.format\.maximumFractionDigits must be an integer between 0 and 20$/,
    ],
    [
      { format: { style: 'currency', currency: 'EUR', minimumFractionDigits: -1 } },
      /^totals\[0\]\.format\.minimumFractionDigits must be an integer between 0 and 20$/,
    ],
    [{ format: { notation: 'scientific' } }, /totals\[0\]\.format\.notation must be one of "standard", "compact"/],
    [{ format: { style: 'decimal', locale: 'de' } }, /totals\[0\]\.format/],
    [
      { showAs: 'percentOfRowTotal', format: { style: 'currency', currency: 'EUR' } },
      /totals\[0\]\.format\.style: currency cannot write a total shown as a percentage/,
    ],
    [
      { highlight: [{ when: { op: '>', value: 1 }, color: 'red' }] },
      /totals\[0\]\.highlight\[0\]\.color must be a colour as #rrggbb/,
    ],
    [
      { highlight: [{ when: { op: '~', value: 1 }, color: '#ff0000' }] },
      /totals\[0\]\.highlight\[0\]\.when\.op must be one of/,
    ],
    [
      { highlight: Array(11).fill({ when: { op: '>', value: 1 }, color: '#ff0000' }) },
      /totals\[0\]\.highlight may have at most 10 items/,
    ],
    [{ colorScale: { from: '#ffffff' } }, /totals\[0\]\.colorScale\.to/],
  ])('%p is a 400 naming the param', async (look, detail) => {
    const res = await stack().call(analyst(), 'CROSSTAB.EXECUTE', {
      index: 'sales',
      rows: ['region'],
      totals: [{ aggregationType: 'Sum', field: 'amount', ...look }],
    });
    expect(res.error?.code).toBe(400);
    expect(res.error?.data.detail).toMatch(detail);
  });
});

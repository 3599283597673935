import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from './support/identities';
import { readPdf, type PdfPage } from './support/pdf';
import {
  A4,
  countBy,
  expectDistributorPages,
  squeeze,
  threeGenres,
  THREE_GENRES,
  type Movie,
} from './support/printed-table';
import { VEGA } from './support/datasets';
import { REPO_ROOT } from './support/quarry-process';
import { type Stack, useStackWithAnalyst } from './support/stack';

interface PdfData {
  contentType: string;
  data: string;
  rowCount?: number;
  columnCount?: number;
  width?: number;
  height?: number;
  report?: { guid: string };
}

const OUT = path.join(REPO_ROOT, 'test-output', 'pdf');

describe('CROSSTAB.EXECUTE format pdf (the chart workers’ Chromium prints it)', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;
  let movies: Movie[];

  beforeAll(() => {
    fs.mkdirSync(OUT, { recursive: true });
    stack = env.stack();
    analyst = env.analyst();
    movies = JSON.parse(fs.readFileSync(path.join(VEGA, 'movies.json'), 'utf8')) as Movie[];
  });

  async function pdf(params: Record<string, unknown>, file: string): Promise<{ data: PdfData; pages: PdfPage[] }> {
    const res = await stack.call<PdfData>(analyst, 'CROSSTAB.EXECUTE', params);
    if (res.error) throw new Error(JSON.stringify(res.error));
    const data = res.data as PdfData;
    expect(data.contentType).toBe('application/pdf');
    const bytes = Buffer.from(data.data, 'base64');
    fs.writeFileSync(path.join(OUT, file), bytes);
    return { data, pages: readPdf(bytes) };
  }

  it('a table over many pages: every page repeats the header rows, names the index and query, and says Page N of M', async () => {
    const query = THREE_GENRES;
    const picked = threeGenres(movies);
    const { data, pages } = await pdf(
      {
        index: 'movies',
        query,
        rows: ['Distributor'],
        columns: [{ field: 'Major Genre' }],
        totals: [{ aggregationType: 'Count' }],
        format: 'pdf',
      },
      'distributors.pdf',
    );
    const distributors = countBy('Distributor', picked);
    // Distributor's blank key is a row too.
    expect(data.rowCount).toBe(distributors.size + (picked.some((m) => m.Distributor === null) ? 1 : 0));
    expect(pages.length).toBeGreaterThanOrEqual(3);
    // Every page the same way up: portrait A4, for so few columns.
    expectDistributorPages(pages, picked, query);
  });

  it('a wide table is printed landscape', async () => {
    const { pages } = await pdf(
      {
        index: 'movies',
        rows: ['MPAA Rating'],
        columns: [{ field: 'Major Genre' }],
        totals: [{ aggregationType: 'Count' }],
        format: 'pdf',
      },
      'wide.pdf',
    );
    expect(pages).toHaveLength(1);
    expect(pages[0].width).toBeCloseTo(A4.long, 0);
    expect(pages[0].height).toBeCloseTo(A4.short, 0);
    const genres = [...countBy('Major Genre', movies).keys()];
    for (const g of genres) expect(squeeze(pages[0].text)).toContain(squeeze(g));
    expect(squeeze(pages[0].text)).toContain('Page1of1');
  });

  it('a chart with format pdf: one page of the chart’s size, its labels as text', async () => {
    const { data, pages } = await pdf(
      {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Count' }],
        chartType: 'Bar2D',
        width: 800,
        height: 500,
        format: 'pdf',
      },
      'chart.pdf',
    );
    expect(data).toMatchObject({ width: 800, height: 500, chartType: 'Bar2D' });
    expect(pages).toHaveLength(1);
    // 96 CSS pixels to the inch, 72 points: 800 × 500 px is 600 × 375 pt.
    expect(pages[0].width).toBeCloseTo(600, 0);
    expect(pages[0].height).toBeCloseTo(375, 0);
    // Drawn as SVG, the chart's words stay text in the PDF: the genres' labels are there.
    for (const g of ['Drama', 'Comedy', 'Action', 'Horror']) expect(pages[0].text).toContain(g);
  });

  it('a report saved as a PDF runs again as a PDF (table and chart)', async () => {
    const base = { index: 'movies', rows: ['MPAA Rating'], totals: [{ aggregationType: 'Count' }], format: 'pdf' };
    for (const [params, name] of [
      [base, 'Ratings on paper'],
      [{ ...base, chartType: 'Pie2D' }, 'Ratings pie on paper'],
    ] as const) {
      const saved = await stack.call<PdfData>(analyst, 'CROSSTAB.EXECUTE', { ...params, saveReport: { name } });
      expect(saved.error).toBeUndefined();
      const guid = (saved.data as PdfData).report?.guid;
      const meta = await stack.call<{ params: Record<string, unknown> }>(analyst, 'REPORTS.METADATA', { guid });
      expect(meta.data?.params).toMatchObject({ format: 'pdf' });
      expect(meta.data?.params).not.toHaveProperty('imageFormat');
      const again = await stack.call<PdfData>(analyst, 'REPORTS.EXECUTE', { guid });
      expect(again.error).toBeUndefined();
      expect(again.data?.contentType).toBe('application/pdf');
      expect(readPdf(Buffer.from(again.data?.data ?? '', 'base64')).length).toBeGreaterThanOrEqual(1);
    }
  });

  describe('refused with a 400 naming the param', () => {
    async function expect400(params: Record<string, unknown>, detail: RegExp) {
      const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Count' }],
        ...params,
      });
      expect(res.error?.code).toBe(400);
      expect(res.error?.data.detail).toMatch(detail);
    }
    it('format pdf with imageFormat beside chartType: the two contradict each other', () =>
      expect400(
        { chartType: 'Pie2D', format: 'pdf', imageFormat: 'png' },
        /imageFormat names an image; format pdf prints the chart/,
      ));
    it('a table format with chartType', () =>
      expect400(
        { chartType: 'Pie2D', format: 'csv' },
        /format is for tables; a chart \(chartType\) takes imageFormat instead, or format pdf/,
      ));
    it('imageFormat pdf (pdf is a format)', () =>
      expect400(
        { chartType: 'Pie2D', imageFormat: 'pdf' },
        /imageFormat "pdf" is not supported; use one of png, svg, echarts/,
      ));
    it('a table too large for paper, before it is printed', async () => {
      const res = await stack.call<PdfData>(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Title'],
        columns: [{ field: 'MPAA Rating' }],
        totals: [{ aggregationType: 'Count' }],
        format: 'pdf',
      });
      expect(res.error?.code).toBe(400);
      const m =
        /^format: a PDF holds at most 20000 cells; this table has (\d+) \((\d+) rows × (\d+) columns × 1 totals\)/.exec(
          res.error?.data.detail ?? '',
        );
      expect(m).not.toBeNull();
      const [cells, rows, columns] = (m ?? []).slice(1).map(Number);
      // The same table as HTML says the same counts: the bound is the table's own size.
      const html = await stack.call<PdfData>(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Title'],
        columns: [{ field: 'MPAA Rating' }],
        totals: [{ aggregationType: 'Count' }],
      });
      expect([html.data?.rowCount, html.data?.columnCount]).toEqual([rows, columns]);
      expect(cells).toBe(rows * columns);
      expect(cells).toBeGreaterThan(20000);
    });
  });
});

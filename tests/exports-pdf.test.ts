import fs from 'node:fs';
import path from 'node:path';
import { exportCalls } from './support/exports';
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

/*
 * EXPORTS.START format pdf: a crosstab (its table, or its chart with chartType) and a saved crosstab report
 * printed by the chart workers' Chromium as a background job, downloaded and read back page by page
 * (tests/support/pdf.ts, written apart from Quarry). The files go to test-output/pdf/ to be looked at.
 */

const OUT = path.join(REPO_ROOT, 'test-output', 'pdf');

describe('EXPORTS.START format pdf', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;
  let movies: Movie[];
  const { call, start, finished } = exportCalls(() => stack.quarry.baseUrl);

  beforeAll(() => {
    fs.mkdirSync(OUT, { recursive: true });
    stack = env.stack();
    analyst = env.analyst();
    movies = JSON.parse(fs.readFileSync(path.join(VEGA, 'movies.json'), 'utf8')) as Movie[];
  });

  /** The export run to its end and its file downloaded: the status, the response's headers, the pages. */
  async function exported(params: Record<string, unknown>, file: string) {
    const id = await start(analyst, params);
    const status = await finished(analyst, id);
    expect(status).toMatchObject({ state: 'done' });
    const res = await fetch(new URL(`/exports/${id}`, stack.quarry.baseUrl), {
      headers: { Authorization: `Bearer ${analyst.token}` },
    });
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    fs.writeFileSync(path.join(OUT, file), bytes);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(bytes.length).toBe(status.bytes);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="export-${id}.pdf"`);
    return { id, status, pages: readPdf(bytes) };
  }

  const distributors = {
    index: 'movies',
    query: THREE_GENRES,
    rows: ['Distributor'],
    columns: [{ field: 'Major Genre' }],
    totals: [{ aggregationType: 'Count' }],
  };

  it('a crosstab table over many pages: header rows on every page, Page N of M, every row once, the Total row last', async () => {
    const picked = threeGenres(movies);
    const byDistributor = countBy('Distributor', picked);
    const { status, pages } = await exported(
      { method: 'CROSSTAB.EXECUTE', params: distributors, format: 'pdf' },
      'export-distributors.pdf',
    );
    // The table's rows: each distributor and the blank one.
    expect(status.rowsWritten).toBe(byDistributor.size + (picked.some((m) => m.Distributor === null) ? 1 : 0));
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expectDistributorPages(pages, picked, distributors.query);
  }, 90000);

  it('the same pages as CROSSTAB.EXECUTE format pdf prints', async () => {
    const { pages } = await exported(
      { method: 'CROSSTAB.EXECUTE', params: distributors, format: 'pdf' },
      'export-distributors-again.pdf',
    );
    const direct = await stack.call<{ data: string }>(analyst, 'CROSSTAB.EXECUTE', { ...distributors, format: 'pdf' });
    const printed = readPdf(Buffer.from(direct.data!.data, 'base64'));
    expect(pages.map((p: PdfPage) => p.text)).toEqual(printed.map((p) => p.text));
  }, 90000);

  it('with chartType, the chart on one page of its size, its labels as text', async () => {
    const { status, pages } = await exported(
      {
        method: 'CROSSTAB.EXECUTE',
        params: {
          index: 'movies',
          rows: ['Major Genre'],
          totals: [{ aggregationType: 'Count' }],
          chartType: 'Bar2D',
          width: 800,
          height: 500,
        },
        format: 'pdf',
      },
      'export-chart.pdf',
    );
    expect(pages).toHaveLength(1);
    // 96 CSS pixels to the inch, 72 points: 800 × 500 px is 600 × 375 pt.
    expect(pages[0].width).toBeCloseTo(600, 0);
    expect(pages[0].height).toBeCloseTo(375, 0);
    const genres = countBy('Major Genre', movies);
    for (const g of ['Drama', 'Comedy', 'Action', 'Horror']) expect(pages[0].text).toContain(g);
    // The chart's rows are the table's it was drawn from: each genre and the blank one.
    expect(status.rowsWritten).toBe(genres.size + (movies.some((m) => m['Major Genre'] === null) ? 1 : 0));
  }, 90000);

  it('a saved crosstab report: a table prints its table, one saved as a chart its chart', async () => {
    const ratings = { index: 'movies', rows: ['MPAA Rating'], totals: [{ aggregationType: 'Count' }] };
    const saveAs = async (params: Record<string, unknown>, name: string) => {
      const saved = await stack.call<{ report: { guid: string } }>(analyst, 'CROSSTAB.EXECUTE', {
        ...params,
        saveReport: { name },
      });
      expect(saved.error).toBeUndefined();
      return saved.data!.report.guid;
    };
    const table = await saveAs({ ...ratings, format: 'csv' }, 'Ratings table');
    const chart = await saveAs({ ...ratings, chartType: 'Pie2D', imageFormat: 'svg' }, 'Ratings pie');
    const rated = countBy('MPAA Rating', movies);
    const t = await exported(
      { method: 'REPORTS.EXECUTE', params: { guid: table }, format: 'pdf' },
      'export-report.pdf',
    );
    expect(t.pages).toHaveLength(1);
    expect([t.pages[0].width, t.pages[0].height]).toEqual([
      expect.closeTo(A4.short, 0) as unknown,
      expect.closeTo(A4.long, 0) as unknown,
    ]);
    const text = squeeze(t.pages[0].text);
    for (const [rating, n] of rated) expect(text).toContain(squeeze(`${rating}${n}`));
    expect(text).toContain(squeeze(`Total${movies.length}`));
    expect(text).toContain('Page1of1');
    const c = await exported({ method: 'REPORTS.EXECUTE', params: { guid: chart }, format: 'pdf' }, 'export-pie.pdf');
    expect(c.pages).toHaveLength(1);
    // The chart's page is its size (the default 800 × 600 px), not A4, and no page numbers.
    expect(c.pages[0].width).toBeCloseTo(600, 0);
    expect(c.pages[0].height).toBeCloseTo(450, 0);
    expect(c.pages[0].text).not.toContain('Page');
    // The same chart report as csv is its table.
    const csv = await start(analyst, { method: 'REPORTS.EXECUTE', params: { guid: chart }, format: 'csv' });
    const unrated = movies.some((m) => m['MPAA Rating'] === null) ? 1 : 0;
    expect(await finished(analyst, csv)).toMatchObject({ state: 'done', rowsWritten: rated.size + unrated });
  }, 90000);

  it('a table too large for paper fails the export saying so, and leaves no file', async () => {
    const id = await start(analyst, {
      method: 'CROSSTAB.EXECUTE',
      params: {
        index: 'movies',
        rows: ['Title'],
        columns: [{ field: 'MPAA Rating' }],
        totals: [{ aggregationType: 'Count' }],
      },
      format: 'pdf',
    });
    const s = await finished(analyst, id);
    expect(s.state).toBe('failed');
    expect(s.error).toMatch(/a PDF holds at most 20000 cells/);
    const res = await fetch(new URL(`/exports/${id}`, stack.quarry.baseUrl), {
      headers: { Authorization: `Bearer ${analyst.token}` },
    });
    expect(res.status).not.toBe(200);
    expect(fs.readdirSync(path.join(stack.dataDir, 'exports')).filter((n) => n.startsWith(`${id}.`))).toEqual([
      `${id}.json`,
    ]);
  }, 90000);

  describe('refused with a 400 naming the param, before anything is recorded', () => {
    async function expect400(params: Record<string, unknown>, detail: RegExp) {
      const before = fs.readdirSync(path.join(stack.dataDir, 'exports')).length;
      const res = (await call(analyst, 'EXPORTS.START', params)).json as {
        error?: { code: number; data: { detail: string } };
      };
      expect(res.error?.code).toBe(400);
      expect(res.error?.data.detail).toMatch(detail);
      expect(fs.readdirSync(path.join(stack.dataDir, 'exports')).length).toBe(before);
    }
    const genres = { index: 'movies', rows: ['Major Genre'], totals: [{ aggregationType: 'Count' }] };

    it('a search as pdf', () =>
      expect400(
        { method: 'QUERIES.EXECUTE', params: { index: 'movies', query: '*' }, format: 'pdf' },
        /^format: a search is exported as csv, jsonl, parquet or xlsx; pdf prints a crosstab/,
      ));
    it('a saved search report as pdf', async () => {
      const saved = await stack.call<{ report: { guid: string } }>(analyst, 'QUERIES.EXECUTE', {
        index: 'movies',
        query: '*',
        saveReport: { name: 'All films' },
      });
      await expect400(
        { method: 'REPORTS.EXECUTE', params: { guid: saved.data!.report.guid }, format: 'pdf' },
        /^format: .*pdf prints a crosstab/,
      );
    });
    it('imageFormat in the crosstab’s params', () =>
      expect400(
        { method: 'CROSSTAB.EXECUTE', params: { ...genres, chartType: 'Pie2D', imageFormat: 'png' }, format: 'pdf' },
        /^params\.imageFormat: /,
      ));
    it('format in the crosstab’s params', () =>
      expect400(
        { method: 'CROSSTAB.EXECUTE', params: { ...genres, format: 'pdf' }, format: 'pdf' },
        /^params\.format: /,
      ));
    it('chartType with another format', () =>
      expect400(
        { method: 'CROSSTAB.EXECUTE', params: { ...genres, chartType: 'Pie2D' }, format: 'xlsx' },
        /^params\.chartType: a chart is exported as pdf only/,
      ));
    it('a chart param the crosstab refuses, named under params', () =>
      expect400(
        { method: 'CROSSTAB.EXECUTE', params: { ...genres, chartType: 'Pie2D', width: 1e9 }, format: 'pdf' },
        /^params\.width/,
      ));
  });
});

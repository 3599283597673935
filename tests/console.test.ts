import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import { runCli } from './support/quarry-process';
import type { Identity } from './support/identities';

/*
 * GET /console in real Chromium, as an analyst uses it: token, indexes, search and paging, sorting,
 * a crosstab whose grand total equals the API's, a chart, saving and re-opening a report, a bad query's
 * message, hostile record values shown as text, and no page, console or CSP error along the way.
 * Screenshots go to test-output/console/.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = path.join(__dirname, '..', 'test-output', 'console');
const HOSTILE = [
  { name: '<script>window.__xss=1</script>', note: 'script tag' },
  { name: '"><img src=x onerror="window.__xss=2">', note: 'attribute break-out' },
  { name: 'plain', note: 'nothing special' },
];

let stack: Stack;
let analyst: Identity;
let moviesOnly: Identity;
let browser: Browser;
let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-console-'));
  fs.writeFileSync(path.join(tmp, 'hostile.json'), JSON.stringify(HOSTILE));
  stack = await startStackWithData({
    extra: async (env) => {
      const r = await runCli(['index', 'load', 'hostile', path.join(tmp, 'hostile.json')], env);
      if (r.code !== 0) throw new Error(r.stderr);
    },
  });
  analyst = await createIdentity(stack.dataDir, 'console-analyst', { indexes: '*' });
  moviesOnly = await createIdentity(stack.dataDir, 'console-movies', { indexes: 'movies,hostile' });
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--font-render-hinting=none'],
  });
}, 120000);

afterAll(async () => {
  await browser?.close();
  await stack?.quarry.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

interface Opened {
  page: Page;
  problems: string[];
  close(): Promise<void>;
}

/** A page in its own browser context (parallel pages in one context can hang), collecting every error. */
async function open(width: number, height: number): Promise<Opened> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width, height });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${String(err)}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  // An error answer from the API (a 400 for a bad query, a 401) is expected in some steps: those are
  // not page problems, so only failed loads of the page's own files count.
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
  const res = await page.goto(`${stack.quarry.baseUrl}/console`, { waitUntil: 'networkidle0' });
  expect(res?.status()).toBe(200);
  return { page, problems, close: () => context.close() };
}

async function connect(page: Page, token: string): Promise<void> {
  await page.type('#token', token);
  await page.click('#token-form button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#index-list .card').length > 0);
}

const texts = (page: Page, selector: string) => page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent ?? ''));

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Pages may answer a 400 or 401 on purpose; Chromium logs those as console errors about the resource. */
const realProblems = (problems: string[]) =>
  problems.filter((p) => !/Failed to load resource: the server responded with a status of 40[01]/.test(p));

describe('GET /console', () => {
  it('is served with a strict Content-Security-Policy and no inline script', async () => {
    const res = await fetch(`${stack.quarry.baseUrl}/console`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toContain('<label for="token">API token</label>');
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect((await fetch(`${stack.quarry.baseUrl}/console/..%2f..%2fpackage.json`)).status).toBe(404);
  });

  it('lists only the indexes the token may read, searches, pages and sorts (1280×800)', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, moviesOnly.token);
      const names = await texts(page, '#index-list .card h3');
      expect(names.sort()).toEqual(['hostile', 'movies']);
      await shot(page, '1-indexes-1280');

      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await page.type('#search-query', 'Director:Spielberg');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length > 0);
      const api = await stack.call<{ total: number; records: Array<{ Title: string }> }>(
        moviesOnly,
        'QUERIES.EXECUTE',
        { index: 'movies', query: 'Director:Spielberg', pageSize: 20 },
      );
      expect(await page.$eval('#search-summary', (n) => n.textContent)).toContain(`${api.data!.total} records`);
      const firstPage = await texts(page, '#search-table tbody tr td:first-child');
      expect(firstPage).toEqual(api.data!.records.map((r) => r.Title));

      await page.click('#search-next');
      await page.waitForFunction(() => document.querySelector('#search-page')?.textContent?.startsWith('page 2'));
      const secondPage = await texts(page, '#search-table tbody tr td:first-child');
      expect(secondPage.length).toBeGreaterThan(0);
      expect(secondPage.some((t) => firstPage.includes(t))).toBe(false);

      // Sorting by a column header: IMDB Rating, ascending, then descending.
      const header = await page.$$eval('#search-table thead th', (ths) => ths.map((th) => th.textContent ?? ''));
      const col = header.findIndex((h) => h.startsWith('IMDB Rating'));
      await page.click(`#search-table thead th:nth-child(${col + 1}) button`);
      await page.waitForFunction(
        (c) => document.querySelector(`#search-table thead th:nth-child(${c}) button`)?.textContent?.includes('▲'),
        {},
        col + 1,
      );
      await page.click(`#search-table thead th:nth-child(${col + 1}) button`);
      await page.waitForFunction(
        (c) => document.querySelector(`#search-table thead th:nth-child(${c}) button`)?.textContent?.includes('▼'),
        {},
        col + 1,
      );
      const ratings = (await texts(page, `#search-table tbody tr td:nth-child(${col + 1})`))
        .filter((t) => t !== '')
        .map(Number);
      expect(ratings.length).toBeGreaterThan(3);
      expect([...ratings].sort((a, b) => b - a)).toEqual(ratings);
      expect(await page.$eval('#curl', (n) => n.textContent)).toContain(
        '"sort":[{"field":"IMDB Rating","direction":"desc"}]',
      );
      await shot(page, '2-search-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('builds a crosstab whose grand total is the API’s, draws a chart, saves and re-opens a report', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, analyst.token);
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'movies');
      await page.select('#ct-rows', 'Major Genre');
      await page.select('.total .t-agg', 'Sum');
      await page.select('.total .t-field', 'Worldwide Gross');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#crosstab-result table');
      const api = await stack.call<{ data: { grandTotal: number[] } }>(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Major Genre'],
        totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross' }],
        format: 'json',
      });
      const grand = api.data!.data.grandTotal[0];
      const lastRow = await page.$$eval('#crosstab-result table tr', (trs) => trs[trs.length - 1].textContent ?? '');
      const shown = Number((lastRow.match(/[\d,]+(\.\d+)?$/)?.[0] ?? '').replace(/,/g, ''));
      expect(shown).toBeCloseTo(grand, 0);
      await shot(page, '3-crosstab-1280');

      await page.type('#crosstab-save-name', 'Console: gross by genre');
      await page.click('#crosstab-save button[type=submit]');
      await page.waitForFunction(
        () =>
          document.querySelector('#status')?.textContent?.startsWith('Saved report') ||
          !document.querySelector('#error')?.hasAttribute('hidden'),
      );
      expect(await page.$eval('#error', (n) => (n.hasAttribute('hidden') ? '' : n.textContent))).toBe('');

      await page.select('#ct-chart', 'Column2D');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#crosstab-result img.chart');
      await page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('#crosstab-result img.chart');
        return !!img && img.complete && img.naturalWidth > 0;
      });
      const size = await page.$eval('#crosstab-result img.chart', (img) => [
        (img as HTMLImageElement).naturalWidth,
        (img as HTMLImageElement).naturalHeight,
      ]);
      expect(size).toEqual([900, 560]);
      await shot(page, '4-chart-1280');

      await page.click('#tab-reports');
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#reports-table td')).some((td) =>
          td.textContent?.startsWith('Console: gross by genre'),
        ),
      );
      const row = await page.$$eval('#reports-table tbody tr', (trs) =>
        trs.findIndex((tr) => tr.textContent?.includes('Console: gross by genre')),
      );
      await page.evaluate(() => {
        document.querySelector('#crosstab-result')?.replaceChildren();
      });
      await page.click(`#reports-table tbody tr:nth-child(${row + 1}) button`);
      await page.waitForSelector('#crosstab-result table');
      expect(await page.$eval('#tab-crosstab', (n) => n.getAttribute('aria-selected'))).toBe('true');
      const reopened = await page.$$eval('#crosstab-result table tr', (trs) => trs[trs.length - 1].textContent ?? '');
      expect(reopened).toBe(lastRow);
      await shot(page, '5-reports-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('builds an analytic crosstab: a date group, a median, a formula and a row filter, as the API answers it', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, analyst.token);
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'movies');
      await page.select('#ct-rows', 'Release Date');
      await page.select('#ct-date-group', 'year');
      await page.type('#ct-time-zone', 'Europe/Paris');
      await page.select('.total .t-agg', 'Count');
      await page.type('.total .t-name', 'Films');
      await page.click('#ct-add-total');
      await page.select('.total:nth-child(2) .t-agg', 'Median');
      await page.select('.total:nth-child(2) .t-field', 'IMDB Rating');
      await page.click('#ct-add-total');
      await page.select('.total:nth-child(3) .t-agg', 'Formula');
      await page.type('.total:nth-child(3) .t-name', 'Gross per film');
      await page.select('.total:nth-child(1) .t-agg', 'Count');
      await page.type('.total:nth-child(3) .t-formula', '[Median (IMDB Rating)] / [Films]');
      await page.select('#ct-filter-op', '>=');
      await page.type('#ct-filter-value', '50');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#crosstab-result table');
      const api = await stack.call<{ data: { rows: Array<{ key: string[] }>; rowsFilteredOut: number } }>(
        analyst,
        'CROSSTAB.EXECUTE',
        {
          index: 'movies',
          rows: [{ field: 'Release Date', dateGroup: 'year' }],
          timeZone: 'Europe/Paris',
          totals: [
            { aggregationType: 'Count', name: 'Films' },
            { aggregationType: 'Median', field: 'IMDB Rating' },
            { name: 'Gross per film', formula: '[Median (IMDB Rating)] / [Films]' },
          ],
          rowFilter: { measure: 0, op: '>=', value: 50 },
          format: 'json',
        },
      );
      expect(api.data!.data.rowsFilteredOut).toBeGreaterThan(0);
      const years = await page.$$eval('#crosstab-result tbody th[scope=row]', (ths) => ths.map((t) => t.textContent));
      expect(years).toEqual(api.data!.data.rows.map((r) => r.key[0]));
      expect(await texts(page, '#crosstab-result thead th')).toEqual(
        expect.arrayContaining(['Films', 'Median (IMDB Rating)', 'Gross per film']),
      );
      await shot(page, '3b-crosstab-analytics-1280');
      // The same table as an Excel file: a download link holding the workbook (a zip: "PK").
      await page.select('#ct-format', 'xlsx');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#ct-xlsx');
      const link = await page.$eval('#ct-xlsx', (a) => [
        a.getAttribute('href') ?? '',
        a.getAttribute('download') ?? '',
      ]);
      expect(link[1]).toBe('movies.xlsx');
      expect(Buffer.from(link[0].split(',')[1], 'base64').subarray(0, 2).toString()).toBe('PK');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows a bad query’s 400 in the server’s own words', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, analyst.token);
      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await page.type('#search-query', '(Title:');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => !document.querySelector('#error')?.hasAttribute('hidden'));
      const api = await stack.call(analyst, 'QUERIES.EXECUTE', {
        index: 'movies',
        query: '(Title:',
        page: 1,
        pageSize: 20,
      });
      const shown = await page.$eval('#error', (n) => n.textContent ?? '');
      expect(shown).toContain('400 Bad Request');
      expect(shown).toContain(api.error!.data.detail);
      await shot(page, '6-error-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows hostile record values as text, and runs none of them', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, moviesOnly.token);
      await page.click('#tab-search');
      await page.select('#search-index', 'hostile');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length === 3);
      const cells = await texts(page, '#search-table tbody td');
      for (const h of HOSTILE) expect(cells).toContain(h.name);
      expect(await page.$$('#search-table img')).toHaveLength(0);
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
      // Also through the crosstab's HTML: the labels are escaped by the server and imported inertly.
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'hostile');
      await page.select('#ct-rows', 'name');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#crosstab-result table');
      const labels = await texts(page, '#crosstab-result table tbody th');
      for (const h of HOSTILE) expect(labels).toContain(h.name);
      expect(await page.$$('#crosstab-result img')).toHaveLength(0);
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
      await shot(page, '7-hostile-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('works on a phone-width screen without horizontal page overflow (390×844)', async () => {
    const { page, problems, close } = await open(390, 844);
    try {
      await connect(page, analyst.token);
      await shot(page, '8-indexes-phone');
      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length > 0);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBeLessThanOrEqual(0);
      await shot(page, '9-search-phone');
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'movies');
      await page.select('#ct-rows', 'MPAA Rating');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#crosstab-result table');
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      ).toBeLessThanOrEqual(0);
      await shot(page, '10-crosstab-phone');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });
});

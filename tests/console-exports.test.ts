import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { parse } from 'csv-parse/sync';
import { launchBrowser } from './support/browser';
import { readPdf } from './support/pdf';
import { VEGA } from './support/datasets';
import type { Identity } from './support/identities';
import { runCli } from './support/quarry-process';
import { createIdentity, startStackWithData, type Stack } from './support/stack';

/*
 * The console's "Export" control in real Chromium: a search's and a crosstab's export started from the
 * result on screen, its progress while it runs, and its file downloaded through the link (the bytes the
 * browser saved, read back here). Screenshots go to test-output/console/.
 */

const SHOTS = path.join(__dirname, '..', 'test-output', 'console');

let stack: Stack;
let analyst: Identity;
let browser: Browser;
let downloads: string;

beforeAll(async () => {
  downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-console-downloads-'));
  stack = await startStackWithData({
    env: { QUARRY_EXPORT_MAX_ROWS: '10000000' },
    extra: async (env) => {
      // Big enough for an export's progress to be seen while it runs.
      const r = await runCli(['index', 'load', 'flights3m', path.join(VEGA, 'flights-3m.parquet')], env);
      if (r.code !== 0) throw new Error(r.stderr);
    },
  });
  analyst = await createIdentity(stack.dataDir, 'console-exporter', { indexes: '*' });
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser();
  // A hang guard: loading the 3M records of flights-3m takes a while on a loaded machine.
}, 360_000);

afterAll(async () => {
  await browser?.close();
  await stack?.quarry.stop();
  fs.rmSync(downloads, { recursive: true, force: true });
});

/** The console connected with the analyst's token, downloads saved to `dir`, page errors collected. */
async function openConsole(dir: string): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${String(err)}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warn') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  const cdp = await page.createCDPSession();
  await cdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: dir });
  await page.goto(`${stack.quarry.baseUrl}/console`, { waitUntil: 'networkidle0' });
  await page.type('#token', analyst.token);
  await page.click('#token-form button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#index-list .card').length > 0);
  return { page, problems, close: () => context.close() };
}

const progressText = (page: Page, kind: string) => page.$eval(`#${kind}-export-progress`, (n) => n.textContent ?? '');

/** Clicks the done export's link and waits for the browser to have saved the whole file. */
async function download(page: Page, kind: string, dir: string): Promise<{ name: string; bytes: Buffer }> {
  await page.click(`#${kind}-export-link`);
  for (let i = 0; i < 600; i++) {
    const done = fs.readdirSync(dir).filter((n) => !n.endsWith('.crdownload'));
    if (done.length) return { name: done[0], bytes: fs.readFileSync(path.join(dir, done[0])) };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the browser saved no file');
}

describe('the console’s Export control', () => {
  it('exports a search as the format picked, shows its progress while it runs, and downloads the file', async () => {
    const dir = fs.mkdtempSync(path.join(downloads, 'search-'));
    const { page, problems, close } = await openConsole(dir);
    try {
      await page.click('#tab-search');
      await page.select('#search-index', 'flights3m');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length > 0);
      // Sorted by delay (the column's button): the export keeps the sort on screen.
      await page.click('#search-table button.sort[aria-label^="delay:"]');
      await page.waitForFunction(() =>
        document.querySelector('th[aria-sort="ascending"] button')?.textContent?.startsWith('delay'),
      );
      expect(await page.$eval('#search-export', (f) => (f as HTMLElement).hidden)).toBe(false);
      await page.select('#search-export-format', 'jsonl');
      await page.click('#search-export button[type=submit]');
      // While it runs: records and bytes written so far.
      await page.waitForFunction(
        () =>
          /^Exporting… [1-9][\d,.\s]* records, [\d.,]+ [KMG]?B written$/.test(
            document.querySelector('#search-export-progress')?.textContent ?? '',
          ),
        { timeout: 120_000, polling: 50 },
      );
      await page.$eval('#search-export', (n) => n.scrollIntoView({ block: 'center' }));
      await page.screenshot({ path: path.join(SHOTS, 'export-1-search-running.png') });
      // A hang guard, not a target: the export of 3M records takes minutes on a loaded machine.
      await page.waitForFunction(() => document.querySelector('#search-export-link') !== null, { timeout: 360_000 });
      const total = await stack.call<{ total: number }>(analyst, 'QUERIES.EXECUTE', {
        index: 'flights3m',
        pageSize: 1,
      });
      const done = await progressText(page, 'search');
      expect(done.replace(/\D/g, '').startsWith(String(total.data!.total))).toBe(true);
      expect(done).toMatch(/^Export done: .* records, [\d.,]+ MB\. Download JSONL$/);
      await page.screenshot({ path: path.join(SHOTS, 'export-2-search-done.png') });

      // A smaller one downloaded through the link: the browser's file is the export, every record in order.
      await page.select('#search-index', 'movies');
      await page.$eval('#search-query', (n) => ((n as HTMLInputElement).value = 'Director:Spielberg'));
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() =>
        /Director:Spielberg/.test(document.querySelector('#search-summary')?.textContent ?? ''),
      );
      // A new result clears the last export's words.
      expect(await progressText(page, 'search')).toBe('');
      await page.select('#search-export-format', 'csv');
      await page.click('#search-export button[type=submit]');
      await page.waitForSelector('#search-export-link', { timeout: 60000 });
      const file = await download(page, 'search', dir);
      expect(file.name).toMatch(/^export-[0-9a-f]{32}\.csv$/);
      const rows = parse(file.bytes, { columns: true }) as Array<{ Title: string }>;
      const api = await stack.call<{ total: number; records: Array<{ Title: string }> }>(analyst, 'QUERIES.EXECUTE', {
        index: 'movies',
        query: 'Director:Spielberg',
        pageSize: 1000,
      });
      expect(rows.map((r) => r.Title)).toEqual(api.data!.records.map((r) => r.Title));
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 600_000);

  it('exports the crosstab on screen as XLSX and downloads the workbook', async () => {
    const dir = fs.mkdtempSync(path.join(downloads, 'crosstab-'));
    const { page, problems, close } = await openConsole(dir);
    try {
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'movies');
      await page.select('#ct-rows-add', 'Major Genre');
      await page.click('#ct-rows-add-button');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#ct-result table');
      // The crosstab as the page sent it (its curl line), for the API's own row count.
      const curl = await page.$eval('#curl', (n) => n.textContent ?? '');
      const sent = (JSON.parse(/-d '(.*)'$/s.exec(curl)![1].replace(/'\\''/g, "'")) as { params: object }).params;
      await page.select('#crosstab-export-format', 'xlsx');
      await page.click('#crosstab-export button[type=submit]');
      await page.waitForSelector('#crosstab-export-link', { timeout: 60000 });
      await page.$eval('#crosstab-export', (n) => n.scrollIntoView({ block: 'center' }));
      await page.screenshot({ path: path.join(SHOTS, 'export-3-crosstab-done.png') });
      const file = await download(page, 'crosstab', dir);
      expect(file.name).toMatch(/^export-[0-9a-f]{32}\.xlsx$/);
      // A zip (the workbook), and the table's own rows: the status says as many records as the table has.
      expect(file.bytes.subarray(0, 2).toString()).toBe('PK');
      const api = await stack.call<{ rowCount: number }>(analyst, 'CROSSTAB.EXECUTE', { ...sent, format: 'xlsx' });
      expect(api.data!.rowCount).toBeGreaterThan(5);
      expect(await progressText(page, 'crosstab')).toContain(`Export done: ${api.data!.rowCount} rows`);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 120000);

  it('exports the crosstab on screen as PDF: the table on A4, then the chart when a chart is shown', async () => {
    const dir = fs.mkdtempSync(path.join(downloads, 'crosstab-pdf-'));
    const { page, problems, close } = await openConsole(dir);
    try {
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'movies');
      await page.select('#ct-rows-add', 'MPAA Rating');
      await page.click('#ct-rows-add-button');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#ct-result table');
      await page.select('#crosstab-export-format', 'pdf');
      await page.click('#crosstab-export button[type=submit]');
      await page.waitForSelector('#crosstab-export-link', { timeout: 60000 });
      expect(await progressText(page, 'crosstab')).toMatch(/Download PDF$/);
      const table = await download(page, 'crosstab', dir);
      expect(table.name).toMatch(/^export-[0-9a-f]{32}\.pdf$/);
      const pages = readPdf(table.bytes);
      expect(pages).toHaveLength(1);
      // A4 portrait, the table's header and the page number.
      expect([Math.round(pages[0].width), Math.round(pages[0].height)]).toEqual([596, 842]);
      expect(pages[0].text.replace(/\s+/g, '')).toContain('MPAARating');
      expect(pages[0].text.replace(/\s+/g, '')).toContain('Page1of1');
      for (const n of fs.readdirSync(dir)) fs.rmSync(path.join(dir, n));

      // Shown as a chart: the PDF is that chart, on one page of its size.
      await page.select('#ct-chart', 'Bar2D');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForSelector('#ct-result .echart canvas', { timeout: 60000 });
      await page.click('#crosstab-export button[type=submit]');
      await page.waitForSelector('#crosstab-export-link', { timeout: 60000 });
      await page.$eval('#crosstab-export', (n) => n.scrollIntoView({ block: 'center' }));
      await page.screenshot({ path: path.join(SHOTS, 'export-4-crosstab-chart-pdf.png') });
      const chart = readPdf((await download(page, 'crosstab', dir)).bytes);
      expect(chart).toHaveLength(1);
      expect(chart[0].width).not.toBeCloseTo(595.92, 0);
      expect(chart[0].text).toContain('PG-13');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 120000);
});

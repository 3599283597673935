import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, ElementHandle, Page } from 'puppeteer-core';
import Database from 'better-sqlite3';
import { createIdentity, startStackWithData, type Stack } from './support/stack';
import { runCli } from './support/quarry-process';
import type { Identity } from './support/identities';
import { launchBrowser } from './support/browser';
import { movies } from './support/datasets';

/*
 * GET /console in real Chromium, as an analyst uses it: the empty page's guidance, token, indexes,
 * search with paging and sorting, numbers in the reader's format and right-aligned, a crosstab built
 * with ordered row and column pickers (the order sent is the one set), a wide table that scrolls with
 * sticky labels to its Total column, interactive ECharts charts (tooltips, legend toggling, resized
 * with their card), per-tab state cleared after errors, the keyboard (tab order, arrows, Enter), saving
 * and re-opening a report, hostile record values shown as text, and no page, console or CSP error.
 * Screenshots go to test-output/console/ (the ones in docs/ are copied from there).
 */

const SHOTS = path.join(__dirname, '..', 'test-output', 'console');
const HOSTILE = [
  { name: '<script>window.__xss=1</script>', note: 'script tag' },
  { name: '"><img src=x onerror="window.__xss=2">', note: 'attribute break-out' },
  { name: 'plain', note: 'nothing special' },
];

let stack: Stack;
let analyst: Identity;
let moviesOnly: Identity;
let writer: Identity;
let browser: Browser;
let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-console-'));
  fs.writeFileSync(path.join(tmp, 'hostile.json'), JSON.stringify(HOSTILE));
  stack = await startStackWithData({
    // The Add data tab's sources read SQLite files from here.
    env: { QUARRY_SOURCE_FILE_DIRS: tmp },
    extra: async (env) => {
      const r = await runCli(['index', 'load', 'hostile', path.join(tmp, 'hostile.json')], env);
      if (r.code !== 0) throw new Error(r.stderr);
    },
  });
  analyst = await createIdentity(stack.dataDir, 'console-analyst', { indexes: '*' });
  moviesOnly = await createIdentity(stack.dataDir, 'console-movies', { indexes: 'movies,hostile' });
  writer = await createIdentity(stack.dataDir, 'console-writer', {
    indexes: 'movies',
    scopes: 'query:execute,indexes:read,indexes:write',
  });
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser();
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

/** Signed in, on the Crosstab tab with an index chosen: where most crosstab tests start. */
async function openCrosstab(page: Page, token: string, index: string): Promise<void> {
  await connect(page, token);
  await page.click('#tab-crosstab');
  await page.select('#ct-index', index);
}

/** Adds a field to the rows (`ct-rows`) or columns (`ct-columns`) picker, at the end of its list. */
/**
 * Clicks a form's submit button once it is shown. A panel just opened, or a form drawn again when the
 * indexes arrive, can leave the button without a box for a moment: puppeteer then refuses the click
 * ("not clickable"), which did not happen, so it is tried again.
 */
async function submit(page: Page, form: string): Promise<void> {
  const button = `${form} button[type=submit]`;
  for (let attempt = 0; ; attempt++) {
    try {
      // A hang guard: a loaded machine can take seconds to draw the panel.
      await page.waitForSelector(button, { visible: true, timeout: 30_000 });
      await page.click(button);
      return;
    } catch (err) {
      if (attempt >= 2 || !/not clickable|not an Element|detached/i.test(String(err))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function addAxis(page: Page, picker: 'ct-rows' | 'ct-columns', field: string): Promise<void> {
  // The picker is drawn again when the index's fields arrive: its select and button are the current
  // ones once the field is offered, and a click on a node replaced in between is tried again.
  const added = `#${picker} li[data-field=${JSON.stringify(field)}]`;
  await page.waitForSelector(`#${picker}-add option[value=${JSON.stringify(field)}]`);
  for (let attempt = 0; ; attempt++) {
    try {
      await page.select(`#${picker}-add`, field);
      await page.click(`#${picker}-add-button`);
      await page.waitForSelector(added, { timeout: 5000 });
      return;
    } catch (err) {
      if (await page.$(added)) return;
      if (attempt >= 2) throw err;
    }
  }
}

/** The params of the last request the page shows as curl. */
async function lastParams(page: Page): Promise<Record<string, unknown>> {
  const curl = await page.$eval('#curl', (n) => n.textContent ?? '');
  const body = /-d '(.*)'$/s.exec(curl)?.[1] ?? '{}';
  return (JSON.parse(body.replace(/'\\''/g, "'")) as { params: Record<string, unknown> }).params;
}

/** The reader's number format, as the page has it (Chromium's locale). */
const formatted = (page: Page, n: number) =>
  page.evaluate((v) => new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(v), n);

const visible = (page: Page, selector: string) =>
  page.$eval(selector, (n) => !(n as HTMLElement).hidden && (n as HTMLElement).offsetParent !== null);

async function runCrosstab(page: Page, wait = '#ct-result table'): Promise<void> {
  await page.click('#crosstab-form button[type=submit]');
  await page.waitForSelector(wait);
}

const texts = (page: Page, selector: string) => page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent ?? ''));

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** What the window shows (no full page): the small screenshots docs/ keeps are copied from these. */
async function view(page: Page, name: string, selector?: string): Promise<void> {
  if (selector) await page.$eval(selector, (n) => n.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: path.join(SHOTS, `view-${name}.png`) });
}

/** Pages may answer a 400 or 401 on purpose; Chromium logs those as console errors about the resource. */
const realProblems = (problems: string[]) =>
  problems.filter((p) => !/Failed to load resource: the server responded with a status of 40[01]/.test(p));

describe('GET /console', () => {
  it('is served with a strict Content-Security-Policy and no inline script; ECharts from the gateway itself', async () => {
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
    const echarts = await fetch(`${stack.quarry.baseUrl}/console/echarts.min.js`);
    expect(echarts.status).toBe(200);
    expect(echarts.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(echarts.headers.get('content-security-policy')).toBe(csp);
    const shipped = fs.readFileSync(require.resolve('echarts/dist/echarts.min.js'));
    expect(Buffer.from(await echarts.arrayBuffer()).equals(shipped)).toBe(true);
  });

  it('says what to do before a token, moves between tabs by keyboard, and connects with Enter', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      expect(await visible(page, '#welcome')).toBe(true);
      expect(await page.$eval('#welcome', (n) => n.textContent ?? '')).toMatch(/Paste a token into API token/);
      await shot(page, '0-welcome-1280');
      await view(page, 'welcome');
      // One tab stop for the tab list (the selected tab), arrows between tabs, Home and End.
      await page.focus('#forget');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-indexes');
      // The focus is visible: the focus ring, not the browser's faint default.
      expect(await page.$eval('#tab-indexes', (n) => getComputedStyle(n).outlineWidth)).toBe('3px');
      await page.keyboard.press('ArrowRight');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-search');
      expect(await page.$eval('#tab-search', (n) => n.getAttribute('aria-selected'))).toBe('true');
      expect(await visible(page, '#panel-search')).toBe(true);
      await page.keyboard.press('End');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-data');
      await page.keyboard.press('Home');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-indexes');
      expect(await page.$$eval('[role=tab]', (tabs) => tabs.map((t) => (t as HTMLElement).tabIndex))).toEqual([
        0, -1, -1, -1, -1, -1,
      ]);
      // A search without a token says what is missing, in the search tab only.
      await page.click('#tab-search');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => !document.querySelector('#panel-search .error')?.hasAttribute('hidden'));
      expect(await page.$eval('#panel-search .error', (n) => n.textContent)).toMatch(/Choose an index|API token/);
      await page.click('#tab-indexes');
      expect(await page.$eval('#panel-indexes .error', (n) => n.hasAttribute('hidden'))).toBe(true);
      await page.type('#token', analyst.token);
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelectorAll('#index-list .card').length > 0);
      expect(await visible(page, '#welcome')).toBe(false);
      expect(await page.$eval('#panel-indexes .status', (n) => n.textContent)).toMatch(/readable indexes/);
      // Who the token belongs to, beside it.
      await page.waitForFunction(() => !document.querySelector('#whoami')?.hasAttribute('hidden'));
      expect(await page.$eval('#whoami', (n) => n.textContent)).toBe(
        'Signed in as console-analyst · reads every index · embed:create, indexes:read, query:execute, reports:read, reports:write',
      );
      await shot(page, '0-signed-in-1280');
      await page.click('#forget');
      expect(await page.$eval('#whoami', (n) => n.hasAttribute('hidden'))).toBe(true);
      // Another token, another user: the line follows the token, not the page.
      await page.type('#token', moviesOnly.token);
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => /console-movies/.test(document.querySelector('#whoami')?.textContent ?? ''));
      expect(await page.$eval('#whoami', (n) => n.textContent)).toMatch(
        /^Signed in as console-movies · reads movies, hostile · /,
      );
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lists only the indexes the token may read, searches, pages and sorts; numbers formatted and right-aligned (1280×800)', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, moviesOnly.token);
      const names = await texts(page, '#index-list .card h3');
      expect(names.sort()).toEqual(['hostile', 'movies']);
      await shot(page, '1-indexes-1280');

      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await page.type('#search-query', 'Director:Spielberg');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length > 0);
      const api = await stack.call<{
        total: number;
        fields: Array<{ name: string }>;
        records: Array<Record<string, unknown> & { Title: string }>;
      }>(moviesOnly, 'QUERIES.EXECUTE', { index: 'movies', query: 'Director:Spielberg', pageSize: 20 });
      expect(await page.$eval('#search-summary', (n) => n.textContent)).toContain(`${api.data!.total} records`);
      const firstPage = await texts(page, '#search-table tbody tr td:first-child');
      expect(firstPage).toEqual(api.data!.records.map((r) => r.Title));
      // Worldwide Gross: the reader's format (thousands separators), right-aligned, the exact value on hover.
      // A word query ranks: the score column stands second, after the row label.
      expect(await page.$eval('#search-table thead th:nth-child(2)', (n) => n.textContent)).toBe('score ▼');
      const gross = api.data!.fields.findIndex((f) => f.name === 'Worldwide Gross') + 2;
      const cell = await page.$eval(`#search-table tbody tr:first-child td:nth-child(${gross})`, (td) => ({
        text: td.textContent,
        title: td.getAttribute('title'),
        align: getComputedStyle(td).textAlign,
      }));
      const value = api.data!.records[0]['Worldwide Gross'] as number;
      expect(value).toBeGreaterThan(1000);
      expect(cell).toEqual({ text: await formatted(page, value), title: String(value), align: 'right' });
      expect(cell.text).not.toBe(String(value));

      await page.click('#search-next');
      await page.waitForFunction(() => document.querySelector('#search-page')?.textContent?.startsWith('page 2'));
      const secondPage = await texts(page, '#search-table tbody tr td:first-child');
      expect(secondPage.length).toBeGreaterThan(0);
      expect(secondPage.some((t) => firstPage.includes(t))).toBe(false);

      // Sorting by a column header: IMDB Rating, ascending, then descending. A sort ends the ranking,
      // and the score column with it: the header is found by its name each time.
      const column = () =>
        page.$$eval(
          '#search-table thead th',
          (ths) => ths.findIndex((th) => th.textContent?.startsWith('IMDB Rating')) + 1,
        );
      const sortedBy = (mark: string) =>
        page.waitForFunction(
          (m) =>
            Array.from(document.querySelectorAll('#search-table thead th button')).some(
              (b) => b.textContent?.startsWith('IMDB Rating') && b.textContent.includes(m),
            ),
          {},
          mark,
        );
      await page.click(`#search-table thead th:nth-child(${await column()}) button`);
      await sortedBy('▲');
      expect(await page.$('#search-table td.score')).toBeNull();
      await page.click(`#search-table thead th:nth-child(${await column()}) button`);
      await sortedBy('▼');
      const col = (await column()) - 1;
      const ratings = (await texts(page, `#search-table tbody tr td:nth-child(${col + 1})`))
        .filter((t) => t !== '')
        .map(Number);
      expect(ratings.length).toBeGreaterThan(3);
      expect([...ratings].sort((a, b) => b - a)).toEqual(ratings);
      expect((await lastParams(page)).sort).toEqual([{ field: 'IMDB Rating', direction: 'desc' }]);
      await shot(page, '2-search-1280');
      await view(page, 'search');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('ranks a word search with its scores and marked words; a click on a facet value narrows it, its chip widens it again', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, moviesOnly.token);
      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await page.type('#search-query', 'Title:star');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#search-facets');
      type Answer = {
        total: number;
        records: Array<Record<string, unknown> & { Title: string }>;
        scores?: number[];
        highlights?: Array<Record<string, string>>;
        facets?: Array<{ field: string; values: Array<{ value: unknown; count: number }>; others: number }>;
      };
      const sent = await lastParams(page);
      expect(sent.highlight).toEqual({});
      const api = (await stack.call<Answer>(moviesOnly, 'QUERIES.EXECUTE', sent)).data!;
      expect(api.total).toBeGreaterThan(5);
      // The page shows the server's ranked order, each record's score (exact on hover), best first.
      expect(await texts(page, '#search-table tbody tr td:first-child')).toEqual(api.records.map((r) => r.Title));
      const scores = await page.$$eval('#search-table tbody td.score', (tds) => tds.map((td) => Number(td.title)));
      expect(scores).toEqual(api.scores);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect(await page.$eval('#search-table thead th:nth-child(2)', (n) => n.textContent)).toBe('score ▼');
      expect(await page.$eval('#panel-search', (n) => n.textContent)).toContain('best match first');
      // Every matched word is marked in its title, the rest of the title is its text.
      const marks = await texts(page, '#search-table tbody td.hl mark');
      expect(marks.length).toBeGreaterThanOrEqual(api.records.length);
      for (const m of marks) expect(m.toLowerCase()).toBe('star');
      expect(await texts(page, '#search-table tbody td.hl')).toEqual(api.records.map((r) => r.Title));

      // The facet lists are the server's counts over every match.
      const shown = await page.$$eval('#search-facets .facet', (sections) =>
        sections.map((s) => ({
          field: s.getAttribute('data-field'),
          values: Array.from(s.querySelectorAll('.facet-value')).map((b) => b.getAttribute('data-value')),
        })),
      );
      expect(shown.map((f) => f.field)).toEqual(api.facets!.map((f) => f.field));
      expect(shown[0].values).toEqual(api.facets![0].values.map((v) => String(v.value)));
      const facet = api.facets!.find((f) => f.values.some((v) => v.value !== '(blank)' && v.count < api.total))!;
      const value = facet.values.find((v) => v.value !== '(blank)' && v.count < api.total)!;
      await page.click(
        `#search-facets .facet[data-field=${JSON.stringify(facet.field)}] .facet-value[data-value=${JSON.stringify(String(value.value))}]`,
      );
      await page.waitForSelector('#search-filters .chip');
      await page.waitForFunction(
        (n) => document.querySelector('#search-summary')?.textContent?.startsWith(`${n} records`),
        {},
        await formatted(page, value.count),
      );
      const narrowed = await lastParams(page);
      expect(narrowed.query).toMatch(/^\(Title:star\) AND /);
      const check = (await stack.call<Answer>(moviesOnly, 'QUERIES.EXECUTE', { ...narrowed, pageSize: 100 })).data!;
      expect(check.total).toBe(value.count);
      for (const r of check.records) expect(String(r[facet.field])).toBe(String(value.value));
      // The query box keeps what the analyst typed; the chip says what narrows it.
      expect(await page.$eval('#search-query', (n) => (n as HTMLInputElement).value)).toBe('Title:star');
      expect(await page.$eval('#search-filters .chip', (n) => n.textContent)).toContain(String(value.value));
      await view(page, 'search-ranked');
      await shot(page, '2b-search-ranked-1280');

      await page.click('#search-filters .chip');
      await page.waitForFunction(() => !document.querySelector('#search-filters'));
      expect((await lastParams(page)).query).toBe('Title:star');
      expect(await page.$eval('#search-summary', (n) => n.textContent)).toContain(
        `${await formatted(page, api.total)} records`,
      );
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('sends rows and columns in the order the analyst sets; a wide table scrolls to its Total with sticky labels', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await openCrosstab(page, analyst.token, 'movies');
      await addAxis(page, 'ct-rows', 'MPAA Rating');
      await addAxis(page, 'ct-rows', 'Major Genre');
      await addAxis(page, 'ct-columns', 'Distributor');
      // Major Genre first, by keyboard: its "up" button, then Enter. The focus stays on the moved item.
      await page.focus('#ct-rows li:nth-child(2) .a-up');
      await page.keyboard.press('Enter');
      expect(await texts(page, '#ct-rows .a-name')).toEqual(['Major Genre', 'MPAA Rating']);
      expect(await page.evaluate(() => document.activeElement?.closest('li')?.dataset.field)).toBe('Major Genre');
      await page.select('.total .t-agg', 'Sum');
      await page.select('.total .t-field', 'Worldwide Gross');
      await runCrosstab(page);
      const sent = await lastParams(page);
      expect(sent.rows).toEqual(['Major Genre', 'MPAA Rating']);
      expect(sent.columns).toEqual([{ field: 'Distributor' }]);
      expect(await texts(page, '#ct-result thead th.corner')).toEqual(['Major Genre', 'MPAA Rating']);

      // The grand total, in the reader's format, is the API's.
      const api = await stack.call<{ data: { grandTotal: number[] } }>(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        rows: ['Major Genre', 'MPAA Rating'],
        columns: [{ field: 'Distributor' }],
        totals: [{ aggregationType: 'Sum', field: 'Worldwide Gross' }],
        format: 'json',
      });
      const grand = api.data!.data.grandTotal[0];
      const lastCell = await page.$eval('#ct-result tfoot td:last-child', (td) => ({
        text: td.textContent,
        title: td.getAttribute('title'),
        align: getComputedStyle(td).textAlign,
      }));
      expect(lastCell).toEqual({ text: await formatted(page, grand), title: String(grand), align: 'right' });

      // Far wider than the card: the box scrolls, not the page, and says there is more to the right.
      const wrap = '#ct-result .table-wrap';
      const widths = await page.$eval(wrap, (w) => [w.scrollWidth, w.clientWidth]);
      expect(widths[0]).toBeGreaterThan(widths[1] * 2);
      expect(
        await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
      ).toBe(0);
      expect(await page.$eval('#ct-result .scroller', (s) => s.classList.contains('more-right'))).toBe(true);
      expect(await page.$eval('#ct-result .scroll-hint', (h) => (h as HTMLElement).hidden)).toBe(false);
      await shot(page, '3-crosstab-wide-1280');
      // Scrolled to the end: the Total column is in view, the row labels still at the left edge.
      await page.$eval(wrap, (w) => w.scrollTo({ left: w.scrollWidth }));
      await page.waitForFunction(
        () => !document.querySelector('#ct-result .scroller')?.classList.contains('more-right'),
      );
      const seen = await page.$eval(wrap, (w) => {
        const box = w.getBoundingClientRect();
        const total = Array.from(w.querySelectorAll('thead th')).find((th) => th.textContent === 'Total')!;
        const t = total.getBoundingClientRect();
        const label = w.querySelector('tbody th.row-label')!.getBoundingClientRect();
        const corner = w.querySelector('thead th.corner')!.getBoundingClientRect();
        return {
          totalInView: t.left >= box.left && t.right <= box.right + 1,
          labelAtEdge: Math.abs(label.left - box.left) <= 2,
          cornerAtEdge: Math.abs(corner.left - box.left) <= 2,
        };
      });
      expect(seen).toEqual({ totalInView: true, labelAtEdge: true, cornerAtEdge: true });
      expect(await page.$eval('#ct-result .scroller', (s) => s.classList.contains('more-left'))).toBe(true);
      // Headers stick to the top when the table scrolls down.
      await page.$eval(wrap, (w) => w.scrollTo({ top: 400 }));
      const headerTop = await page.$eval(wrap, (w) => [
        w.querySelector('thead th')!.getBoundingClientRect().top,
        w.getBoundingClientRect().top,
      ]);
      expect(Math.abs(headerTop[0] - headerTop[1])).toBeLessThanOrEqual(2);
      await shot(page, '3b-crosstab-scrolled-1280');
      await view(page, 'wide-table', '#ct-result');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('draws an interactive chart: tooltips, legend toggling, sized to its card and resized with it', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await openCrosstab(page, analyst.token, 'movies');
      await addAxis(page, 'ct-rows', 'Major Genre');
      await addAxis(page, 'ct-columns', 'MPAA Rating');
      await page.select('#ct-chart', 'MSColumn2D');
      expect(await page.$eval('#ct-image', (s) => (s as HTMLSelectElement).value)).toBe('echarts');
      await runCrosstab(page, '#ct-result .echart canvas');
      const sent = await lastParams(page);
      expect(sent).toMatchObject({ chartType: 'MSColumn2D', imageFormat: 'echarts' });
      // Sized to its card: the width asked for is the card's, and the canvas fills it.
      const sizes = await page.$eval('#ct-result', (card) => [
        card.clientWidth,
        card.querySelector('canvas')!.clientWidth,
      ]);
      expect(sent.width).toBe(sizes[0]);
      expect(Math.abs(sizes[1] - sizes[0])).toBeLessThanOrEqual(2);

      await page.$eval('#ct-result', (e) => e.scrollIntoView());
      const chart = () =>
        page.evaluate(() => {
          const w = window as unknown as {
            echarts: {
              getInstanceByDom(e: Element): { getOption(): { legend: Array<{ selected?: Record<string, boolean> }> } };
            };
          };
          return w.echarts.getInstanceByDom(document.querySelector('#ct-result .echart')!).getOption();
        });
      /** Where ECharts drew each text (page coordinates), from its own display list. */
      const drawnTexts = () =>
        page.evaluate(() => {
          type Shape = {
            style?: { text?: string };
            transform?: number[];
            getBoundingRect(): { x: number; y: number; width: number; height: number };
          };
          const w = window as unknown as {
            echarts: { getInstanceByDom(e: Element): { getZr(): { storage: { getDisplayList(): Shape[] } } } };
          };
          const el = document.querySelector('#ct-result .echart')!;
          const box = el.getBoundingClientRect();
          return w.echarts
            .getInstanceByDom(el)
            .getZr()
            .storage.getDisplayList()
            .filter((d) => typeof d.style?.text === 'string')
            .map((d) => {
              const r = d.getBoundingRect();
              const t = d.transform ?? [1, 0, 0, 1, 0, 0];
              return {
                text: d.style!.text!,
                x: box.left + t[4] + r.x + r.width / 2,
                y: box.top + t[5] + r.y + r.height / 2,
              };
            });
        });

      // Legend toggling: a click on the entry "PG" hides that series, a second shows it again.
      const entry = (await drawnTexts()).find((t) => t.text === 'PG')!;
      await page.mouse.click(entry.x, entry.y);
      await page.waitForFunction(
        () => {
          const w = window as unknown as {
            echarts: {
              getInstanceByDom(e: Element): { getOption(): { legend: Array<{ selected?: Record<string, boolean> }> } };
            };
          };
          const option = w.echarts.getInstanceByDom(document.querySelector('#ct-result .echart')!).getOption();
          return option.legend[0].selected?.PG === false;
        },
        { timeout: 30_000 },
      );
      await shot(page, '4b-chart-legend-off-1280');
      await page.mouse.click(entry.x, entry.y);
      expect((await chart()).legend[0].selected?.PG).toBe(true);

      // A tooltip on hover over the first genre's bars: each rating with its count, drawn by ECharts.
      const before = (await drawnTexts()).filter((t) => t.text === 'PG-13').length;
      const target = await page.evaluate(() => {
        const w = window as unknown as {
          echarts: { getInstanceByDom(e: Element): { convertToPixel(f: object, v: unknown[]): number[] } };
        };
        const el = document.querySelector('#ct-result .echart')!;
        const [x, y] = w.echarts.getInstanceByDom(el).convertToPixel({ seriesIndex: 0 }, [0, 1]);
        const box = el.getBoundingClientRect();
        return [box.left + x, box.top + y - 20];
      });
      await page.mouse.move(target[0] + 5, target[1]);
      await page.mouse.move(target[0], target[1]);
      await page.waitForFunction(
        (n) => {
          type Shape = { style?: { text?: string } };
          const w = window as unknown as {
            echarts: { getInstanceByDom(e: Element): { getZr(): { storage: { getDisplayList(): Shape[] } } } };
          };
          const list = w.echarts
            .getInstanceByDom(document.querySelector('#ct-result .echart')!)
            .getZr()
            .storage.getDisplayList();
          return list.filter((d) => d.style?.text === 'PG-13').length > n;
        },
        { timeout: 30_000 },
        before,
      );
      await view(page, 'chart');
      await shot(page, '4-chart-1280');

      // Resized with its card: a narrower window, a narrower canvas.
      await page.setViewport({ width: 900, height: 800 });
      await page.waitForFunction(() => {
        const card = document.querySelector('#ct-result')!;
        return Math.abs(card.querySelector('canvas')!.clientWidth - card.clientWidth) <= 2;
      });
      expect(await page.$eval('#ct-result canvas', (c) => c.clientWidth)).toBeLessThan(sizes[1]);

      // A PNG is still on offer.
      await page.setViewport({ width: 1280, height: 800 });
      await page.select('#ct-image', 'png');
      await runCrosstab(page, '#ct-result img.chart');
      expect(await page.$('#ct-result .echart')).toBeNull();
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('keeps each tab’s state to itself and clears the previous answer after an error', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, analyst.token);
      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await submit(page, '#search-form');
      await page.waitForSelector('#search-table');
      const searchStatus = await page.$eval('#panel-search .status', (n) => n.textContent ?? '');
      expect(searchStatus).toMatch(/^Records 1–20 of [\d,.\s]+\.$/);

      await page.click('#tab-crosstab');
      expect(await page.$eval('#panel-crosstab .status', (n) => n.textContent)).toBe('');
      await page.select('#ct-index', 'movies');
      await addAxis(page, 'ct-rows', 'MPAA Rating');
      await runCrosstab(page);
      // A bad query: the error in the server's words, and no table left from the call before.
      await page.type('#ct-query', '(Title:');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => !document.querySelector('#panel-crosstab .error')?.hasAttribute('hidden'));
      const api = await stack.call(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        query: '(Title:',
        rows: ['MPAA Rating'],
        totals: [{ aggregationType: 'Count' }],
      });
      const shown = await page.$eval('#panel-crosstab .error', (n) => n.textContent ?? '');
      expect(shown).toContain('400 Bad Request');
      expect(shown).toContain(api.error!.data.detail);
      expect(await page.$('#ct-result table')).toBeNull();
      // A row field is set: the hint to add one does not come back with the error.
      expect(await page.$eval('#ct-result', (n) => n.textContent?.trim())).toBe('');
      expect(await page.$eval('#panel-crosstab .status', (n) => n.textContent)).toBe('');
      await shot(page, '6-error-1280');

      // The other tab kept its own: its table, its status, and no error of the crosstab's.
      await page.click('#tab-search');
      expect(await page.$eval('#panel-search .status', (n) => n.textContent)).toBe(searchStatus);
      expect(await page.$eval('#panel-search .error', (n) => n.hasAttribute('hidden'))).toBe(true);
      expect(await page.$('#search-table')).not.toBeNull();

      // A bad search clears the search's own table (and its pager) too.
      await page.type('#search-query', '(Title:');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => !document.querySelector('#panel-search .error')?.hasAttribute('hidden'));
      expect(await page.$('#search-table')).toBeNull();
      expect(await page.$eval('#search-pager', (n) => (n as HTMLElement).hidden)).toBe(true);
      // And a good crosstab afterwards has no error left over.
      await page.click('#tab-crosstab');
      await page.$eval('#ct-query', (n) => ((n as HTMLInputElement).value = ''));
      await runCrosstab(page);
      expect(await page.$eval('#panel-crosstab .error', (n) => n.hasAttribute('hidden'))).toBe(true);
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('names the controls on screen in an error and opens their section; the empty hint stays away', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await openCrosstab(page, analyst.token, 'movies');
      // Before any row field, the hint says what to do.
      expect(await page.$eval('#ct-result', (n) => n.textContent)).toMatch(/press Run/);
      await addAxis(page, 'ct-rows', 'Title');
      await page.select('#ct-chart', 'Column2D');
      await page.select('#ct-image', 'png');
      expect(await page.$eval('details.more', (n) => (n as HTMLDetailsElement).open)).toBe(false);
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForFunction(() => !document.querySelector('#panel-crosstab .error')?.hasAttribute('hidden'));
      const api = await stack.call(analyst, 'CROSSTAB.EXECUTE', await lastParams(page));
      // The API speaks of its parameters; the console of its controls, where the analyst finds them.
      expect(api.error!.data.detail).toMatch(/Use rowLimit: \d+ \(with rowOrder to choose which\)/);
      const shown = await page.$eval('#panel-crosstab .error', (n) => n.textContent ?? '');
      expect(shown).toMatch(/Use “Top rows”: \d+ \(with “Order rows by” to choose which\),? (or )?narrow “Records”/);
      expect(shown).not.toMatch(/rowLimit|rowOrder|the query|width and height/);
      expect(await page.$eval('details.more', (n) => (n as HTMLDetailsElement).open)).toBe(true);
      expect(await page.$eval('#ct-row-limit', (n) => n.getAttribute('aria-invalid'))).toBe('true');
      expect(await page.$eval('#ct-order-by', (n) => n.getAttribute('aria-invalid'))).toBe('true');
      expect(await visible(page, '#ct-row-limit')).toBe(true);
      expect(await page.$eval('#ct-result', (n) => n.textContent?.trim())).toBe('');
      await shot(page, '6b-error-names-controls-1280');

      // 1,000 rows are more than the card draws legibly: the limit it can, in the form's words too.
      await page.type('#ct-row-limit', '1000');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForFunction(() =>
        /legibly/.test(document.querySelector('#panel-crosstab .error')?.textContent ?? ''),
      );
      const legible = await page.$eval('#panel-crosstab .error', (n) => n.textContent ?? '');
      expect(legible).toMatch(
        /can draw at most \d+ categories legibly.*Use “Top rows”: \d+ \(with “Order rows by” to choose which\), narrow “Records”, or use a wider window/,
      );
      expect(await page.$eval('#ct-result', (n) => n.textContent?.trim())).toBe('');
      await shot(page, '6c-error-legible-1280');

      // Doing what it says draws the chart, and the marks go with the error.
      await page.$eval('#ct-row-limit', (n) => ((n as HTMLInputElement).value = ''));
      await page.type('#ct-row-limit', '20');
      await runCrosstab(page, '#ct-result img.chart');
      expect(await page.$eval('#panel-crosstab .error', (n) => n.hasAttribute('hidden'))).toBe(true);
      expect(await page.$$('#panel-crosstab [aria-invalid]')).toHaveLength(0);

      // A pie of two totals is refused (not drawn from the first): the form's way to pick is its Totals.
      await page.click('#ct-add-total');
      await page.select('#ct-chart', 'Pie2D');
      await page.click('#crosstab-form button[type=submit]');
      await page.waitForFunction(() => !document.querySelector('#panel-crosstab .error')?.hasAttribute('hidden'));
      const pie = await page.$eval('#panel-crosstab .error', (n) => n.textContent ?? '');
      expect(pie).toMatch(/“Show as” Pie2D draws at most 1 total; 2 would be drawn: keep only those in “Totals”/);
      expect(await page.$eval('#ct-totals', (n) => n.getAttribute('aria-invalid'))).toBe('true');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('reaches every analytic option: date group, bins, median, percentile, formula, show-as, filter, order, XLSX', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await openCrosstab(page, analyst.token, 'movies');
      await addAxis(page, 'ct-rows', 'Release Date');
      await page.select('#ct-rows li:nth-child(1) .a-date', 'year');
      await addAxis(page, 'ct-columns', 'Running Time min');
      await page.type('#ct-columns li:nth-child(1) .a-bin', '60');
      await page.click('#ct-columns li:nth-child(1) .a-reverse');
      await page.select('.total .t-agg', 'Count');
      await page.type('.total .t-name', 'Films');
      await page.click('#ct-add-total');
      await page.select('.total:nth-child(2) .t-agg', 'Median');
      await page.select('.total:nth-child(2) .t-field', 'IMDB Rating');
      await page.click('#ct-add-total');
      await page.select('.total:nth-child(3) .t-agg', 'Percentile');
      await page.select('.total:nth-child(3) .t-field', 'IMDB Rating');
      await page.type('.total:nth-child(3) .t-pct', '90');
      await page.click('#ct-add-total');
      await page.select('.total:nth-child(4) .t-agg', 'Formula');
      await page.type('.total:nth-child(4) .t-name', 'Median per film');
      await page.type('.total:nth-child(4) .t-formula', '[Median (IMDB Rating)] / [Films]');
      await page.select('.total:nth-child(1) .t-show', 'percentOfGrandTotal');
      await page.click('details.more summary');
      await page.select('#ct-order-by', '0');
      await page.select('#ct-order-dir', 'desc');
      await page.type('#ct-row-limit', '5');
      await page.select('#ct-filter-measure', '0');
      await page.select('#ct-filter-op', '>=');
      await page.type('#ct-filter-value', '1');
      await page.type('#ct-time-zone', 'Europe/Paris');
      await page.click('#ct-subtotals');
      await runCrosstab(page);
      const sent = await lastParams(page);
      const expected = {
        index: 'movies',
        query: '*',
        rows: [{ field: 'Release Date', dateGroup: 'year' }],
        columns: [{ field: 'Running Time min', bin: { width: 60 }, reverse: true }],
        totals: [
          { aggregationType: 'Count', name: 'Films', showAs: 'percentOfGrandTotal' },
          { aggregationType: 'Median', field: 'IMDB Rating' },
          { aggregationType: 'Percentile', field: 'IMDB Rating', percentile: 90 },
          { name: 'Median per film', formula: '[Median (IMDB Rating)] / [Films]' },
        ],
        timeZone: 'Europe/Paris',
        rowFilter: { measure: 0, op: '>=', value: 1 },
        subtotals: true,
        rowOrder: { by: 'value', measure: 0, direction: 'desc' },
        rowLimit: 5,
        format: 'html',
      };
      expect(sent).toEqual(expected);
      const api = await stack.call<{ data: { rows: Array<{ key: string[] }> } }>(analyst, 'CROSSTAB.EXECUTE', {
        ...expected,
        format: 'json',
      });
      expect(api.error).toBeUndefined();
      const years = await page.$$eval('#ct-result tbody th[scope=row]', (ths) => ths.map((t) => t.textContent));
      expect(years).toEqual(api.data!.data.rows.map((r) => r.key[0]));
      expect(await texts(page, '#ct-result thead th')).toEqual(
        expect.arrayContaining(['Films', 'Median (IMDB Rating)', 'Median per film']),
      );
      // showAs prints a percentage, in the reader's format.
      expect(await page.$eval('#ct-result tfoot td', (td) => td.textContent)).toMatch(/%$/);
      await shot(page, '3c-crosstab-analytics-1280');
      await view(page, 'builder', '#panel-crosstab');
      // The same table as an Excel file: a download link holding the workbook (a zip: "PK").
      await page.select('#ct-format', 'xlsx');
      await runCrosstab(page, '#ct-xlsx');
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

  it('formats a total and colours its cells: money as the server writes it, the scale painted under the CSP', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await openCrosstab(page, analyst.token, 'movies');
      await addAxis(page, 'ct-rows', 'MPAA Rating');
      await page.select('.total .t-agg', 'Sum');
      await page.select('.total .t-field', 'Worldwide Gross');
      await page.select('.total .t-format', 'currency');
      await page.click('.total .t-currency', { count: 3 });
      await page.type('.total .t-currency', 'eur');
      await page.click('.total .t-scale');
      await runCrosstab(page);
      const sent = await lastParams(page);
      expect(sent.totals).toEqual([
        {
          aggregationType: 'Sum',
          field: 'Worldwide Gross',
          format: { style: 'currency', currency: 'EUR' },
          colorScale: { from: '#f7fbff', to: '#08519c' },
        },
      ]);
      const api = await stack.call<{ data: { rows: Array<{ key: string[]; total: number[] }> } }>(
        analyst,
        'CROSSTAB.EXECUTE',
        { ...sent, format: 'json' },
      );
      expect(api.error).toBeUndefined();
      const euro = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' });
      const cells = await page.$$eval('#ct-result tbody td', (tds) =>
        tds.map((td) => ({
          text: td.textContent,
          bg: getComputedStyle(td).backgroundColor,
          fg: getComputedStyle(td).color,
        })),
      );
      expect(cells.map((c) => c.text)).toEqual(api.data!.data.rows.map((r) => euro.format(r.total[0])));
      // The highest total darkest (the scale's end colour), and every cell painted with readable text.
      const top = api.data!.data.rows.reduce((a, b, i, all) => (b.total[0] > all[a].total[0] ? i : a), 0);
      expect(cells[top].bg).toBe('rgb(8, 81, 156)');
      expect(cells[top].fg).toBe('rgb(255, 255, 255)');
      expect(new Set(cells.map((c) => c.bg)).size).toBeGreaterThan(2);
      await shot(page, '3d-crosstab-formats-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('saves a crosstab as a report and re-opens it: the form as saved, the same table', async () => {
    const { page, problems, close } = await open(1280, 800);
    try {
      await openCrosstab(page, analyst.token, 'movies');
      await addAxis(page, 'ct-rows', 'Creative Type');
      await addAxis(page, 'ct-rows', 'Major Genre');
      await page.select('.total .t-agg', 'Sum');
      await page.select('.total .t-field', 'Worldwide Gross');
      await runCrosstab(page);
      const lastRow = await page.$$eval('#ct-result table tr', (trs) => trs[trs.length - 1].textContent ?? '');
      await page.type('#crosstab-save-name', 'Console: gross by type and genre');
      await page.click('#crosstab-save button[type=submit]');
      await page.waitForFunction(() =>
        document.querySelector('#panel-crosstab .status')?.textContent?.startsWith('Saved report'),
      );
      // Saving keeps the table on screen.
      expect(await page.$('#ct-result table')).not.toBeNull();

      await page.click('#tab-reports');
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#reports-table td')).some((td) =>
          td.textContent?.startsWith('Console: gross by type and genre'),
        ),
      );
      await shot(page, '5-reports-1280');
      const row = await page.$$eval('#reports-table tbody tr', (trs) =>
        trs.findIndex((tr) => tr.textContent?.includes('Console: gross by type and genre')),
      );
      // Another crosstab in the form first: opening the report puts the saved one back.
      await page.click('#tab-crosstab');
      await page.click('#ct-rows li:nth-child(1) .a-remove');
      await page.click('#tab-reports');
      // Showing the tab lists the reports again: the row's button is the new list's.
      await page.waitForNetworkIdle({ idleTime: 200 });
      // The table of the first run goes, so that the one waited for is the report's.
      await page.evaluate(() => document.querySelector('#ct-result')?.replaceChildren());
      await page.click(`#reports-table tbody tr:nth-child(${row + 1}) button`);
      await page.waitForSelector('#ct-result table');
      expect(await page.$eval('#tab-crosstab', (n) => n.getAttribute('aria-selected'))).toBe('true');
      expect(await texts(page, '#ct-rows .a-name')).toEqual(['Creative Type', 'Major Genre']);
      const reopened = await page.$$eval('#ct-result table tr', (trs) => trs[trs.length - 1].textContent ?? '');
      expect(reopened).toBe(lastRow);
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('manages reports: the open report named with its owner, saving again updates it, rename, share, delete', async () => {
    const { page, problems, close } = await open(1280, 800);
    const NAME = 'Console: managed';
    const status = (panel: string, start: string) =>
      page.waitForFunction(
        (sel, s) => document.querySelector(sel)?.textContent?.startsWith(s),
        {},
        `#panel-${panel} .status`,
        start,
      );
    try {
      await openCrosstab(page, analyst.token, 'movies');
      await addAxis(page, 'ct-rows', 'MPAA Rating');
      await runCrosstab(page);
      await page.type('#crosstab-save-name', NAME);
      await page.click('#crosstab-save button[type=submit]');
      await status('crosstab', 'Saved report');
      const guid = String(((await lastParams(page)) as { guid?: string }).guid);
      const saved = await stack.call<{ owner: string; version: number }>(analyst, 'REPORTS.METADATA', { guid });
      // The tab says which report it shows and whose it is (the token's user: no call says it otherwise).
      const line = await page.$eval('#crosstab-loaded', (n) => n.textContent ?? '');
      expect(line).toContain(`“${NAME}” (version 1, owner ${saved.data!.owner})`);
      expect(await page.$eval('#crosstab-save button[type=submit]', (n) => n.textContent)).toBe('Update report');

      // Saving again under its name updates it (a new version), where it answered 409 before.
      await addAxis(page, 'ct-rows', 'Major Genre');
      await runCrosstab(page);
      // The previous table is still there while the new one runs: wait for the genres, since a save
      // records the crosstab the tab shows.
      await page.waitForFunction(() => document.querySelector('#ct-result table')?.textContent?.includes('Comedy'));
      await page.click('#crosstab-save button[type=submit]');
      await status('crosstab', `Updated report “${NAME}”: version 2.`);
      const updated = await stack.call<{ version: number; params: { rows: unknown[] } }>(analyst, 'REPORTS.METADATA', {
        guid,
      });
      expect(updated.data).toMatchObject({ version: 2, params: { rows: ['MPAA Rating', 'Major Genre'] } });
      await view(page, 'report-loaded-1280', '#crosstab-loaded');

      // Another name saves a new report; the taken name is said in words, not as a 409.
      await page.$eval('#crosstab-save-name', (n) => ((n as HTMLInputElement).value = ''));
      await page.type('#crosstab-save-name', 'Console: gross by type and genre');
      expect(await page.$eval('#crosstab-save button[type=submit]', (n) => n.textContent)).toBe('Save as report');

      await page.click('#tab-reports');
      const button = (label: string) => `#reports-table button[aria-label="${label}"]`;
      await page.waitForSelector(button(`Rename ${NAME}`));
      page.once('dialog', (d) => void d.accept(`${NAME} (renamed)`));
      await page.click(button(`Rename ${NAME}`));
      await status('reports', `Renamed “${NAME}” to “${NAME} (renamed)”.`);
      expect(await page.$eval('#crosstab-loaded', (n) => n.textContent ?? '')).toContain(`“${NAME} (renamed)”`);

      await page.click(button(`Share ${NAME} (renamed)`));
      await status('reports', `“${NAME} (renamed)” is shared`);
      expect((await stack.call<{ shared: boolean }>(analyst, 'REPORTS.METADATA', { guid })).data!.shared).toBe(true);
      await shot(page, '5b-reports-managed-1280');

      page.once('dialog', (d) => void d.accept());
      await page.click(button(`Delete ${NAME} (renamed)`));
      await status('reports', `Deleted “${NAME} (renamed)”. An operator can restore it until`);
      expect(await page.$(button(`Delete ${NAME} (renamed)`))).toBeNull();
      expect((await stack.call(analyst, 'REPORTS.METADATA', { guid })).error?.code).toBe(404);
      expect(await page.$eval('#crosstab-loaded', (n) => (n as HTMLElement).hidden)).toBe(true);
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('runs a report with its parameters from a form typed by each field; empty fields take the defaults', async () => {
    const saved = await stack.call<{ report: { guid: string } }>(analyst, 'CROSSTAB.EXECUTE', {
      index: 'movies',
      rows: ['Major Genre'],
      totals: [{ aggregationType: 'Count' }],
      saveReport: {
        name: 'Console: parameters',
        parameters: [
          { name: 'rating', field: 'MPAA Rating', kind: 'values', default: ['R'] },
          { name: 'gross', field: 'Worldwide Gross', kind: 'range' },
        ],
      },
    });
    const guid = saved.data!.report.guid;
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, analyst.token);
      await page.click('#tab-reports');
      const versions = '#reports-table button[aria-label="Versions of Console: parameters"]';
      await page.waitForSelector(versions);
      await page.click(versions);
      await page.waitForSelector('#report-parameters');
      // The default is in the form; the range's ends are number inputs.
      expect(await page.$eval('#report-parameter-0', (n) => (n as HTMLTextAreaElement).value)).toBe('R');
      expect(await page.$eval('#report-parameter-1-from', (n) => (n as HTMLInputElement).type)).toBe('number');
      await page.$eval('#report-parameter-0', (n) => ((n as HTMLTextAreaElement).value = ''));
      await page.type('#report-parameter-0', 'PG\nPG-13');
      await page.type('#report-parameter-1-from', '100000000');
      await page.click('#versions-table button[aria-label="Run version 1 on the index now"]');
      await page.waitForSelector('#report-run table');
      const sent = await lastParams(page);
      expect(sent).toMatchObject({ guid, parameters: { rating: ['PG', 'PG-13'], gross: { from: 100000000 } } });
      const expected = movies().filter(
        (m) =>
          ['PG', 'PG-13'].includes(String(m['MPAA Rating'])) &&
          typeof m['Worldwide Gross'] === 'number' &&
          m['Worldwide Gross'] >= 100000000,
      ).length;
      const shown = await page.$eval('#report-run table', (n) => n.textContent ?? '');
      expect(shown).toContain(await formatted(page, expected));
      await shot(page, '5c-report-parameters-1280');
      // Emptied, the rating takes its default again (R) and the range sends nothing.
      await page.$eval('#report-parameter-0', (n) => ((n as HTMLTextAreaElement).value = ''));
      await page.$eval('#report-parameter-1-from', (n) => ((n as HTMLInputElement).value = ''));
      await page.click('#versions-table button[aria-label="Run version 1 on the index now"]');
      await page.waitForFunction(() => !document.querySelector('#curl')?.textContent?.includes('parameters'));
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
      // A highlighted value: its matched word marked, its markup still text.
      await page.$eval('#search-query', (n) => ((n as HTMLInputElement).value = 'script OR onerror'));
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length === 2);
      expect((await texts(page, '#search-table tbody td.hl mark')).sort()).toEqual([
        'onerror',
        'script',
        'script',
        'script',
      ]);
      expect(await texts(page, '#search-table tbody td.hl')).toEqual(
        expect.arrayContaining([HOSTILE[0].name, HOSTILE[1].name]),
      );
      expect(await page.$$('#search-table img, #search-table script')).toHaveLength(0);
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
      // Also through the crosstab's HTML and an interactive chart's labels.
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'hostile');
      await addAxis(page, 'ct-rows', 'name');
      await runCrosstab(page);
      const labels = await texts(page, '#ct-result table tbody th');
      for (const h of HOSTILE) expect(labels).toContain(h.name);
      expect(await page.$$('#ct-result img')).toHaveLength(0);
      await page.select('#ct-chart', 'Bar2D');
      await runCrosstab(page, '#ct-result .echart canvas');
      await page.mouse.move(300, 700);
      expect(await page.$$('#ct-result img, #ct-result script')).toHaveLength(0);
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
      await shot(page, '7-hostile-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('adds data: a file uploaded into a new index its user then owns; a malformed one lists its rows and publishes nothing', async () => {
    const good = path.join(tmp, 'fruit.csv');
    fs.writeFileSync(good, 'id,name,price\n1,apple,1.5\n2,pear,2.25\n3,plum,0.75\n');
    const bad = path.join(tmp, 'fruit-bad.csv');
    fs.writeFileSync(bad, 'id,name,price\n4,fig,3\n5,kiwi\n');
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, writer.token);
      await page.click('#tab-data');
      const input = (await page.waitForSelector('#upload-file')) as ElementHandle<HTMLInputElement> | null;
      await input!.uploadFile(good);
      await page.type('#upload-index', 'fruit');
      await submit(page, '#upload-form');
      await page.waitForSelector('#upload-summary');
      expect(await page.$eval('#upload-summary', (n) => n.textContent)).toMatch(
        /^3 rows read = 3 loaded \+ 0 rejected · the index now holds 3 records\.$/,
      );
      expect(await page.$eval('#panel-data .status', (n) => n.textContent)).toBe('Published fruit version 1.');
      // The request as curl, the file as the body; the new index is among the cards (its owner reads it).
      expect(await page.$eval('#curl', (n) => n.textContent)).toContain(
        `-X POST '${stack.quarry.baseUrl}/indexes/fruit/records?mode=replace'`,
      );
      expect(await page.$eval('#curl', (n) => n.textContent)).toContain("--data-binary @'fruit.csv'");
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#index-list .card h3')).some((h) => h.textContent === 'fruit'),
      );
      // Upsert shows its key field (only upsert); a malformed file fails whole, its rows listed under the error.
      expect(await visible(page, '#upload-key')).toBe(false);
      await page.select('#upload-mode', 'upsert');
      expect(await visible(page, '#upload-key')).toBe(true);
      await page.select('#upload-mode', 'replace');
      await ((await page.$('#upload-file')) as ElementHandle<HTMLInputElement>).uploadFile(bad);
      await submit(page, '#upload-form');
      await page.waitForSelector('#upload-rejects tbody tr');
      const error = await page.$eval('#panel-data .error', (n) => n.textContent ?? '');
      expect(error).toMatch(
        /^400 Bad Request the upload:3, column "price": the row has 2 fields where the header has 3/,
      );
      expect(await texts(page, '#upload-rejects tbody td')).toEqual([
        'line 3',
        'price',
        'the row has 2 fields where the header has 3',
      ]);
      const still = await stack.data<{ total: number }>(writer, 'QUERIES.EXECUTE', { index: 'fruit', query: '*' });
      expect(still.total).toBe(3);
      await shot(page, '9-add-data-1280');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('adds a source: a SQLite file read into a new index by Run now, its runs listed, then deleted', async () => {
    const file = path.join(tmp, 'shop.sqlite');
    const db = new Database(file);
    db.exec(`CREATE TABLE items (id INTEGER, name TEXT, weight REAL);
      INSERT INTO items VALUES (1, 'bolt', 0.5), (2, 'nut', 0.25), (3, 'washer', 0.1), (4, 'gear', 2.5)`);
    db.close();
    const { page, problems, close } = await open(1280, 800);
    try {
      await connect(page, writer.token);
      await page.click('#tab-data');
      await page.waitForFunction(
        () =>
          document.querySelector('#sources-result')?.textContent === 'No sources yet: define one above, then Run now.',
      );
      // A database kind asks for host, database, user and password; a SQLite file for its path alone.
      expect(await visible(page, '#source-host')).toBe(true);
      expect(await visible(page, '#source-password')).toBe(true);
      expect(await page.$eval('#source-password', (n) => (n as HTMLInputElement).type)).toBe('password');
      await page.select('#source-kind', 'sqlite');
      expect(await visible(page, '#source-host')).toBe(false);
      expect(await visible(page, '#source-password')).toBe(false);
      expect(await page.$eval('#source-url-name', (n) => n.textContent)).toBe('File on the server');
      await page.type('#source-name', 'shop');
      await page.type('#source-index', 'shop');
      await page.type('#source-url', file);
      await page.type('#source-table', 'items');
      await submit(page, '#source-form');
      await page.waitForSelector('#sources-table tbody tr');
      expect(await texts(page, '#sources-table tbody td')).toEqual([
        'shop',
        'shop',
        'sqlite',
        file,
        'replaceon demand',
        'never run',
        '—',
        'Run nowRunsDelete',
      ]);
      expect(await page.$eval('#panel-sources .status', (n) => n.textContent)).toMatch(
        /^Added source “shop” \([0-9a-f]{32}\)\. Run now reads it\.$/,
      );
      // The curl shown is the create's (the list asked again after it is not what was done).
      expect(await lastParams(page)).toEqual({
        name: 'shop',
        index: 'shop',
        kind: 'sqlite',
        connection: { url: file },
        table: 'items',
        refresh: { mode: 'replace' },
      });

      await page.click('#sources-table button[aria-label="Run shop"]');
      // The run is followed until it ends; then the status says what it published.
      await page.waitForFunction(
        () =>
          /^“shop” (published|found)|failed/.test(document.querySelector('#panel-sources .status')?.textContent ?? ''),
        { timeout: 60_000 },
      );
      expect(await page.$eval('#panel-sources .status', (n) => n.textContent)).toBe(
        '“shop” published shop version 1: 4 rows read, 4 loaded, 0 rejected.',
      );
      const run = await texts(page, '#source-runs-table tbody td');
      expect(run.slice(1, 3)).toEqual(['done', 'manual']);
      expect(run.slice(5)).toEqual(['4', '4', '0', 'v1', '']);
      expect(await page.$eval('#source-runs h3', (n) => n.textContent)).toBe('Runs of “shop” newest first');
      expect(await page.$eval('#curl', (n) => n.textContent)).toContain('"method":"SOURCES.RUN"');
      expect((await texts(page, '#sources-table tbody td'))[5]).toMatch(/^done v1\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
      // The new index is the file's rows, among the cards.
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#index-list .card h3')).some((h) => h.textContent === 'shop'),
      );
      const rows = await stack.data<{ total: number }>(writer, 'QUERIES.EXECUTE', { index: 'shop', query: '*' });
      expect(rows.total).toBe(4);
      await shot(page, '12-sources-1280');
      await view(page, 'sources', '#panel-sources');

      // A refusal is said above the form, in the form's words, its control marked; a password is not in the curl.
      await page.select('#source-kind', 'postgres');
      await page.$eval('#source-name', (n) => ((n as HTMLInputElement).value = ''));
      await page.type('#source-name', 'orders');
      await page.type('#source-host', 'db.example.com');
      await page.type('#source-database', 'shop');
      await page.type('#source-user', 'quarry');
      await page.type('#source-password', 'pw-never-in-the-curl');
      await submit(page, '#source-form');
      await page.waitForFunction(() => !document.querySelector('#panel-sources .error')?.hasAttribute('hidden'));
      expect(await page.$eval('#panel-sources .error', (n) => n.textContent)).toMatch(
        /^400 Bad Request “Connection”: .*QUARRY_SOURCE_ALLOW.*db\.example\.com:5432 is refused/,
      );
      expect(await page.$eval('#source-host', (n) => n.getAttribute('aria-invalid'))).toBe('true');
      expect(await page.$eval('#curl', (n) => n.textContent)).not.toContain('pw-never-in-the-curl');
      expect(await page.$eval('#curl', (n) => n.textContent)).toContain('"password":"***"');
      // The upload's answer and the list stay: the refusal is the form's.
      expect(await texts(page, '#sources-table tbody td:first-child')).toEqual(['shop']);
      await shot(page, '12b-sources-refused-1280');

      page.once('dialog', (d) => void d.accept());
      await page.click('#sources-table button[aria-label="Delete shop"]');
      await page.waitForFunction(
        () =>
          document.querySelector('#sources-result')?.textContent === 'No sources yet: define one above, then Run now.',
      );
      expect(await page.$eval('#source-runs', (n) => n.textContent)).toBe('');
      expect(await page.$eval('#panel-sources .status', (n) => n.textContent)).toBe(
        'Deleted the source “shop”; the index shop keeps what it loaded.',
      );
      expect(
        (await stack.data<{ total: number }>(writer, 'QUERIES.EXECUTE', { index: 'shop', query: '*' })).total,
      ).toBe(4);
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('works on a phone-width screen without horizontal page overflow (390×844)', async () => {
    const { page, problems, close } = await open(390, 844);
    // Nothing sticks out of the page (a wide table scrolls inside its own box); the culprits named if so.
    const noOverflow = async () =>
      expect(
        await page.evaluate(() => {
          const width = document.documentElement.clientWidth;
          return {
            overflow: Math.max(0, document.documentElement.scrollWidth - width),
            culprits: Array.from(document.querySelectorAll('body *'))
              .filter((e) => !e.closest('.table-wrap') && e.getBoundingClientRect().right > width + 0.5)
              .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`),
          };
        }),
      ).toEqual({ overflow: 0, culprits: [] });
    try {
      await shot(page, '8a-welcome-phone');
      await connect(page, analyst.token);
      await shot(page, '8-indexes-phone');
      await page.click('#tab-search');
      await page.select('#search-index', 'movies');
      await page.click('#search-form button[type=submit]');
      await page.waitForFunction(() => document.querySelectorAll('#search-table tbody tr').length > 0);
      await noOverflow();
      // The facet lists start folded there, above the records, and open on a tap.
      await page.waitForSelector('#search-facets details');
      expect(await page.$eval('#search-facets details', (d) => (d as HTMLDetailsElement).open)).toBe(false);
      await shot(page, '9-search-phone');
      await page.click('#search-facets summary');
      expect(await page.$eval('#search-facets details', (d) => (d as HTMLDetailsElement).open)).toBe(true);
      await noOverflow();
      await page.click('#tab-crosstab');
      await page.select('#ct-index', 'movies');
      await addAxis(page, 'ct-rows', 'Major Genre');
      await addAxis(page, 'ct-columns', 'MPAA Rating');
      await runCrosstab(page);
      await noOverflow();
      // The cue is set by a ResizeObserver once the table is laid out: wait for it rather than race it.
      await page.waitForFunction(
        () => document.querySelector('#ct-result .scroller')?.classList.contains('more-right') === true,
        { timeout: 30_000 },
      );
      await shot(page, '10-crosstab-phone');
      await view(page, 'phone-table', '#ct-result');
      await page.select('#ct-chart', 'Pie2D');
      await runCrosstab(page, '#ct-result .echart canvas');
      await noOverflow();
      const sizes = await page.$eval('#ct-result', (card) => [
        card.clientWidth,
        card.querySelector('canvas')!.clientWidth,
      ]);
      expect(Math.abs(sizes[1] - sizes[0])).toBeLessThanOrEqual(2);
      await shot(page, '11-chart-phone');
      await view(page, 'phone-chart', '#ct-result');
      // Add data, uploads and sources, fits too; a token that may not write is told so, not shown an error.
      await page.click('#tab-data');
      await page.waitForFunction(() =>
        /indexes:write/.test(document.querySelector('#sources-result')?.textContent ?? ''),
      );
      expect(await page.$eval('#panel-sources .error', (n) => n.hasAttribute('hidden'))).toBe(true);
      await noOverflow();
      await shot(page, '12-add-data-phone');
      expect(realProblems(problems)).toEqual([]);
    } finally {
      await close();
    }
  });
});

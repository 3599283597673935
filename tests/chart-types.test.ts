import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { CHART_TYPE_NAMES, METHODS } from '@quarry/contract';
import type { Identity } from './support/identities';
import { pngFacts } from './support/png';
import { REPO_ROOT } from './support/quarry-process';
import { type Stack, useStackWithAnalyst } from './support/stack';
import { launchBrowser } from './support/browser';

interface ChartData {
  contentType: string;
  data: string;
  width: number;
  height: number;
  chartType: string;
}

const OUT = path.join(REPO_ROOT, 'test-output', 'chart-types');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Totals by how many a type needs: one count, or a money sum and a rating average on two scales. */
const TOTALS: Record<number, Array<Record<string, string>>> = {
  1: [{ aggregationType: 'Count' }],
  2: [
    { aggregationType: 'Sum', field: 'Worldwide Gross' },
    { aggregationType: 'Average', field: 'IMDB Rating' },
  ],
};

/** Every chart type the contract lists, each with the number of totals it needs. */
const CASES = CHART_TYPE_NAMES.map((c) => [c.name, c.minMeasures] as const);

const ECHARTS = require.resolve('echarts/dist/echarts.min.js');
const CLIENT = path.join(REPO_ROOT, 'packages/client/dist/chart-option.js');

describe('CROSSTAB.EXECUTE draws every chart type the contract lists (PNG and ECharts option through JSON-RPC)', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(() => {
    fs.mkdirSync(OUT, { recursive: true });
    stack = env.stack();
    analyst = env.analyst();
  });

  const query =
    '(MPAA Rating):(G OR PG OR R OR "PG-13") AND (Major Genre):(Action OR Adventure OR Comedy OR Drama OR Horror OR Musical)';

  /** Genres by rating: the crosstab every type is drawn from. */
  const chartParams = (type: string, totals: number) => ({
    index: 'movies',
    query,
    rows: ['Major Genre'],
    // One total: the ratings as columns give the multi-series types several series. Two totals: the
    // two totals are the two series (or the two axes of a Scatter).
    columns: totals === 1 ? [{ field: 'MPAA Rating' }] : [],
    totals: TOTALS[totals],
    chartType: type,
  });

  it('the list covers the two-total types', () => {
    expect(CASES).toEqual(
      expect.arrayContaining([
        ['MSCombiDY2D', 2],
        ['Scatter', 2],
      ]),
    );
    expect(CASES.length).toBeGreaterThanOrEqual(35);
  });

  it.each(CASES)('%s with %i total(s): a valid PNG of the asked size, not blank', async (type, totals) => {
    const width = 600 + (type.length % 7) * 10;
    const height = 420 + (type.length % 3) * 10;
    const res = await stack.call<ChartData>(analyst, 'CROSSTAB.EXECUTE', {
      ...chartParams(type, totals),
      width,
      height,
    });
    expect(res.error).toBeUndefined();
    const data = res.data!;
    expect(data).toMatchObject({ contentType: 'image/png', width, height, chartType: type });
    const png = Buffer.from(data.data, 'base64');
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    fs.writeFileSync(path.join(OUT, `${type}.png`), png);
    const facts = await pngFacts(png, 40);
    expect([facts.width, facts.height]).toEqual([width, height]);
    expect(facts.inked).toBeGreaterThan(width * height * 0.01);
    expect(facts.fillColours).toBeGreaterThanOrEqual(1);
  });

  it.each([['MSCombiDY2D'], ['Scatter']])(
    '%s draws from both totals: two series colours (MSCombiDY2D), points (Scatter)',
    async (type) => {
      const res = await stack.call<ChartData>(analyst, 'CROSSTAB.EXECUTE', {
        index: 'movies',
        query,
        rows: ['Major Genre'],
        totals: TOTALS[2],
        chartType: type,
        width: 800,
        height: 600,
      });
      expect(res.error).toBeUndefined();
      const facts = await pngFacts(Buffer.from(res.data!.data, 'base64'), 20);
      expect(facts.fillColours).toBeGreaterThanOrEqual(type === 'Scatter' ? 1 : 2);
    },
  );

  /** The same crosstab as the PNG case above, asked for as its ECharts option. */
  const echartsCall = (type: string, totals: number, extra: Record<string, unknown> = {}) =>
    stack.call<Omit<ChartData, 'data'> & { data: Record<string, unknown> }>(analyst, 'CROSSTAB.EXECUTE', {
      ...chartParams(type, totals),
      imageFormat: 'echarts',
      width: 640,
      height: 440,
      ...extra,
    });

  describe('imageFormat "echarts"', () => {
    let browser: Browser;
    let page: Page;
    beforeAll(async () => {
      browser = await launchBrowser();
      page = await browser.newPage();
      await page.setContent('<!doctype html><html><body style="margin:0"><div id="c"></div></body></html>');
      await page.addScriptTag({ path: ECHARTS });
      // @quarry/client's reviveChartOption as the package ships it (CommonJS), loaded as a browser would bundle it.
      await page.addScriptTag({
        content: `window.exports = {}; ${fs.readFileSync(CLIENT, 'utf8')}; window.reviveChartOption = exports.reviveChartOption;`,
      });
    }, 60000);
    afterAll(async () => {
      await browser?.close();
    });

    /** Draws the option in the page, with Quarry's formatters or as plain ECharts: inked pixels and ECharts' own errors. */
    const draw = (option: Record<string, unknown>, revive: boolean) =>
      page.evaluate(
        (o, r, w, h) => {
          const win = window as unknown as {
            echarts: {
              init(
                e: HTMLElement,
                t: null,
                opts: object,
              ): {
                setOption(o: object): void;
                getDom(): HTMLElement;
                dispose(): void;
                getOption(): { series: unknown[] };
              };
            };
            reviveChartOption(o: object): object;
          };
          const errors: string[] = [];
          const warn = console.warn;
          console.warn = (...args: unknown[]) => errors.push(args.join(' '));
          const el = document.getElementById('c')!;
          const chart = win.echarts.init(el, null, { renderer: 'canvas', width: w, height: h, devicePixelRatio: 1 });
          try {
            chart.setOption(r ? win.reviveChartOption(o) : o);
            const canvas = el.querySelector('canvas')!;
            const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
            let inked = 0;
            for (let i = 0; i < px.length; i += 4) if (px[i] < 200 || px[i + 1] < 200 || px[i + 2] < 200) inked++;
            return { inked, series: chart.getOption().series.length, errors };
          } finally {
            console.warn = warn;
            chart.dispose();
          }
        },
        option,
        revive,
        640,
        440,
      );

    it.each(CASES)('%s with %i total(s): plain JSON that ECharts draws in Chromium', async (type, totals) => {
      const res = await echartsCall(type, totals);
      expect(res.error).toBeUndefined();
      const data = res.data!;
      expect(data).toMatchObject({ contentType: 'application/json', width: 640, height: 440, chartType: type });
      const option = data.data;
      // Plain JSON: it survives a round trip unchanged, and holds no formatter ECharts would print as text.
      expect(JSON.parse(JSON.stringify(option))).toEqual(option);
      expect(JSON.stringify(option)).not.toMatch(/quarry:|function|=>/);
      expect(option).toHaveProperty('series');
      for (const revive of [true, false]) {
        const drawn = await draw(structuredClone(option), revive);
        expect(drawn.errors).toEqual([]);
        expect(drawn.series).toBeGreaterThanOrEqual(1);
        expect(drawn.inked).toBeGreaterThan(640 * 440 * 0.01);
      }
    });

    it('compact axis numbers are named under quarryFormatter, never a formatter ECharts would print as text', async () => {
      const res = await echartsCall('Column2D', 2, { columns: [], totals: [TOTALS[2][0]] });
      const yAxis = (res.data!.data as { yAxis: { axisLabel: Record<string, unknown> } }).yAxis;
      expect(yAxis.axisLabel).toMatchObject({ quarryFormatter: 'compact' });
      expect(yAxis.axisLabel.formatter).toBeUndefined();
    });

    it('refuses what the PNG refuses, in the same words (too many categories for the size)', async () => {
      const many = { rows: ['Title'], query: '*', columns: [], totals: TOTALS[1], width: 300, height: 200 };
      const asOption = await echartsCall('Pie2D', 1, many);
      const asPng = await echartsCall('Pie2D', 1, { ...many, imageFormat: 'png' });
      expect(asOption.error?.code).toBe(400);
      expect(asOption.error?.data.detail).toBe(asPng.error?.data.detail);
    });

    it('is saved with the report and runs again from REPORTS.METADATA and REPORTS.EXECUTE', async () => {
      const saved = await echartsCall('Radar', 1, { saveReport: { name: 'echarts radar' } });
      expect(saved.error).toBeUndefined();
      const guid = (saved.data as unknown as { report: { guid: string } }).report.guid;
      const meta = await stack.call<{ params: Record<string, unknown> }>(analyst, 'REPORTS.METADATA', { guid });
      expect(meta.data!.params).toMatchObject({ chartType: 'Radar', imageFormat: 'echarts' });
      const again = await stack.call<{ data: unknown }>(analyst, 'CROSSTAB.EXECUTE', meta.data!.params);
      expect(again.data!.data).toEqual(saved.data!.data);
      const run = await stack.call<{ contentType: string; data: unknown }>(analyst, 'REPORTS.EXECUTE', { guid });
      expect(run.error).toBeUndefined();
      expect(run.data).toMatchObject({ contentType: 'application/json', chartType: 'Radar' });
      expect(run.data!.data).toEqual(saved.data!.data);
      expect(METHODS['REPORTS.EXECUTE'].result.safeParse(run.data).error).toBeUndefined();
    });
  });

  it.each([['MSCombiDY2D'], ['Scatter']])('%s with one total is a 400 before any pivot', async (type) => {
    const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', {
      index: 'movies',
      query,
      rows: ['Major Genre'],
      totals: TOTALS[1],
      chartType: type,
    });
    expect(res.error?.code).toBe(400);
    expect(res.error?.data.detail).toMatch(new RegExp(`chartType ${type} needs at least 2 totals.*1 given`));
  });
});

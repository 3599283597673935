import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from './support/identities';
import { pngFacts } from './support/png';
import { REPO_ROOT } from './support/quarry-process';
import { type Stack, useStackWithAnalyst } from './support/stack';

interface ChartData {
  contentType: string;
  data: string;
  width: number;
  height: number;
  chartType: string;
}

const OUT = path.join(REPO_ROOT, 'test-output', 'charts');

const TYPES: Array<{ type: string; series: number }> = [
  // multi-series: 4 ratings as columns -> 4 series; single-series and pies: 1 series (pies colour slices)
  { type: 'Column2D', series: 1 },
  { type: 'Column3D', series: 1 },
  { type: 'MSColumn2D', series: 4 },
  { type: 'StackedColumn2D', series: 4 },
  { type: 'Bar2D', series: 1 },
  { type: 'MSBar2D', series: 4 },
  { type: 'StackedBar2D', series: 4 },
  { type: 'Line', series: 1 },
  { type: 'MSLine', series: 4 },
  { type: 'Area2D', series: 1 },
  { type: 'MSArea', series: 4 },
  { type: 'StackedArea2D', series: 4 },
  { type: 'Pie2D', series: 6 },
  { type: 'Pie3D', series: 6 },
  { type: 'Doughnut2D', series: 6 },
];

describe('CROSSTAB.EXECUTE as PNG charts (headless Chromium behind BullMQ)', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(() => {
    fs.mkdirSync(OUT, { recursive: true });
    stack = env.stack();
    analyst = env.analyst();
  });

  const base = {
    index: 'movies',
    query:
      '(MPAA Rating):(G OR PG OR R OR "PG-13") AND (Major Genre):(Action OR Adventure OR Comedy OR Drama OR Horror OR Musical)',
    rows: ['Major Genre'],
    columns: [{ field: 'MPAA Rating' }],
    totals: [{ aggregationType: 'Count' }],
  };

  it.each(TYPES)(
    '$type: a PNG of exactly the requested size, not blank, a colour per series',
    async ({ type, series }) => {
      const width = 640 + (type.length % 5) * 10;
      const height = 480;
      const res = await stack.call<ChartData>(analyst, 'CROSSTAB.EXECUTE', {
        ...base,
        chartType: type.toLowerCase() === 'line' ? 'LINE' : type,
        width,
        height,
      });
      expect(res.error).toBeUndefined();
      const data = res.data!;
      expect(data).toMatchObject({ contentType: 'image/png', width, height, chartType: type });
      const png = Buffer.from(data.data, 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      fs.writeFileSync(path.join(OUT, `${type}.png`), png);
      const facts = await pngFacts(png, type.startsWith('Line') || type === 'MSLine' ? 40 : 150);
      expect(facts.width).toBe(width);
      expect(facts.height).toBe(height);
      expect(facts.inked).toBeGreaterThan(width * height * 0.02);
      expect(facts.fillColours).toBeGreaterThanOrEqual(series);
    },
  );

  it('defaults to 800x600', async () => {
    const res = await stack.call<ChartData>(analyst, 'CROSSTAB.EXECUTE', { ...base, chartType: 'MSColumn2D' });
    expect(await pngFacts(Buffer.from(res.data!.data, 'base64'))).toMatchObject({ width: 800, height: 600 });
  });

  describe('validation', () => {
    const expect400 = async (params: Record<string, unknown>, detail: RegExp) => {
      const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', { ...base, ...params });
      expect(res.error?.code).toBe(400);
      expect(res.error?.data.detail).toMatch(detail);
    };
    it('unknown chartType lists the supported ones', () =>
      expect400(
        { chartType: 'Radar3D' },
        /chartType "Radar3D" is not supported; use one of Column2D, Column3D, MSColumn2D, .*Doughnut2D/,
      ));
    it.each([99, 4001, 640.5, '800'])('width %p', (width) =>
      expect400({ chartType: 'Column2D', width }, /width must be an integer between 100 and 4000/),
    );
    it('height out of range', () =>
      expect400({ chartType: 'Column2D', height: 50 }, /height must be an integer between 100 and 4000/));
    it('more than 1,000 categories', () =>
      expect400(
        { query: '*', rows: ['Title'], columns: [], chartType: 'Column2D' },
        /would have \d+ categories; the limit is 1000/,
      ));
    it('more than 100 series', () =>
      expect400(
        { query: '*', columns: [{ field: 'Director' }], chartType: 'MSColumn2D' },
        /would have \d+ series; the limit is 100/,
      ));
  });

  it('saves a chart crosstab as a report whose metadata re-renders it', async () => {
    const saved = await stack.call<ChartData & { report: { guid: string } }>(analyst, 'CROSSTAB.EXECUTE', {
      ...base,
      chartType: 'Pie2D',
      saveReport: { name: 'Genre pie' },
    });
    expect(saved.error).toBeUndefined();
    const meta = await stack.call<{ method: string; params: Record<string, unknown> }>(analyst, 'REPORTS.METADATA', {
      guid: saved.data!.report.guid,
    });
    expect(meta.data!.params).toMatchObject({ chartType: 'Pie2D', width: 800, height: 600 });
    const again = await stack.call<ChartData>(analyst, meta.data!.method, meta.data!.params);
    expect(again.data!.data).toBe(saved.data!.data);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from './support/identities';
import { pngFacts } from './support/png';
import { REPO_ROOT } from './support/quarry-process';
import { type Stack, useStackWithAnalyst } from './support/stack';

type O = Record<string, any>; // reading an ECharts option back

const OUT = path.join(REPO_ROOT, 'test-output', 'chart-totals');
const COUNT = { aggregationType: 'Count' };
const MEDIAN = { aggregationType: 'Median', field: 'IMDB Rating' };

describe('CROSSTAB.EXECUTE chartTotals: the totals a chart draws, a second one on its own axis', () => {
  const env = useStackWithAnalyst();
  let stack: Stack;
  let analyst: Identity;

  beforeAll(() => {
    fs.mkdirSync(OUT, { recursive: true });
    stack = env.stack();
    analyst = env.analyst();
  });

  /** Count and median rating by rating × genre: two totals of very different sizes, many columns. */
  const params = (extra: Record<string, unknown>) => ({
    index: 'movies',
    rows: ['MPAA Rating'],
    columns: [{ field: 'Major Genre' }],
    totals: [COUNT, MEDIAN],
    width: 1000,
    height: 600,
    ...extra,
  });
  const option = async (extra: Record<string, unknown>) => {
    const res = await stack.call<{ data: O }>(
      analyst,
      'CROSSTAB.EXECUTE',
      params({ imageFormat: 'echarts', ...extra }),
    );
    expect(res.error).toBeUndefined();
    return res.data!.data;
  };
  const png = async (name: string, extra: Record<string, unknown>) => {
    const res = await stack.call<{ data: string }>(analyst, 'CROSSTAB.EXECUTE', params(extra));
    expect(res.error).toBeUndefined();
    const image = Buffer.from(res.data!.data, 'base64');
    fs.writeFileSync(path.join(OUT, `${name}.png`), image);
    return pngFacts(image, 20);
  };
  const refusal = async (extra: Record<string, unknown>) => {
    const res = await stack.call(analyst, 'CROSSTAB.EXECUTE', params(extra));
    expect(res.error?.code).toBe(400);
    return String(res.error?.data.detail);
  };

  it('MSColumn2D of two totals: the median on a right axis of its own, one legend entry per genre', async () => {
    const o = await option({ chartType: 'MSColumn2D' });
    expect(o.yAxis).toHaveLength(2);
    expect(o.yAxis[0].name).toBe('Count (Records)');
    expect(o.yAxis[1].name).toMatch(/^Median \(IMDB Rating\)/);
    const series = o.series as O[];
    const genres = o.legend.data as string[];
    expect(new Set(genres).size).toBe(genres.length);
    expect(series).toHaveLength(genres.length * 2);
    const medians = series.filter((s) => s.yAxisIndex === 1).flatMap((s) => s.data as Array<number | null>);
    const counts = series.filter((s) => s.yAxisIndex !== 1).flatMap((s) => s.data as Array<number | null>);
    expect(Math.max(...medians.map((v) => v ?? 0))).toBeLessThanOrEqual(10);
    expect(Math.max(...counts.map((v) => v ?? 0))).toBeGreaterThan(10);
    const facts = await png('MSColumn2D-count-and-median', { chartType: 'MSColumn2D' });
    expect(facts.fillColours).toBeGreaterThanOrEqual(2);
  });

  it('MSBar2D of two totals: the second value axis along the top', async () => {
    const o = await option({ chartType: 'MSBar2D', height: 900 });
    expect(o.xAxis).toHaveLength(2);
    expect(o.xAxis[1]).toMatchObject({ position: 'top', name: expect.stringMatching(/^Median/) });
    await png('MSBar2D-count-and-median', { chartType: 'MSBar2D', height: 900 });
  });

  it.each([
    ['by name, in any case', ['median (imdb rating)']],
    ['by index', [1]],
  ])('Heatmap draws the total chartTotals names %s', async (_, chartTotals) => {
    const o = await option({ chartType: 'Heatmap', chartTotals });
    expect(o.visualMap.max).toBeLessThanOrEqual(10);
    await png('Heatmap-median', { chartType: 'Heatmap', chartTotals });
  });

  it('chartTotals orders the totals: the median first is the left axis', async () => {
    const o = await option({ chartType: 'MSLine', chartTotals: ['Median (IMDB Rating)', 0] });
    expect(o.yAxis[0].name).toBe('Median (IMDB Rating)');
    expect(o.yAxis[1].name).toMatch(/^Count \(Records\)/);
  });

  it('chartTotals names a compared total as its header reads: "Count (Records) vs previous year"', async () => {
    const o = await option({
      chartType: 'MSLine',
      rows: [{ field: 'Release Date', dateGroup: 'year' }],
      columns: [],
      totals: [COUNT, { ...COUNT, compare: { to: 'previousPeriod', as: 'difference' } }],
      chartTotals: ['count (records) vs previous year'],
    });
    // One total: one value axis, named as the header names the compared total.
    expect([o.yAxis].flat().map((a: O) => a.name)).toEqual(['Count (Records) vs previous year']);
  });

  it.each([
    ['Heatmap', 'at most 1 total; 2 would be drawn'],
    ['Pie2D', 'at most 1 total; 2 would be drawn'],
    ['Treemap', 'at most 1 total; 2 would be drawn'],
  ])('%s of two totals is a 400 naming chartTotals, not a chart of the first', async (chartType, words) => {
    expect(await refusal({ chartType })).toMatch(new RegExp(`chartType ${chartType} draws ${words}.*chartTotals`));
  });

  it('three totals are a 400 for a type that draws two', async () => {
    const detail = await refusal({
      chartType: 'MSColumn2D',
      totals: [COUNT, MEDIAN, { aggregationType: 'Max', field: 'IMDB Rating' }],
    });
    expect(detail).toMatch(/MSColumn2D draws at most 2 totals.*chartTotals/);
  });

  it.each([
    [
      { chartType: 'Heatmap', chartTotals: ['Nope'] },
      /chartTotals\[0\] "Nope" names no total; the totals are "Count \(Records\)", "Median \(IMDB Rating\)"/,
    ],
    [{ chartType: 'Heatmap', chartTotals: [2] }, /chartTotals\[0\] must be an index into totals, from 0 to 1/],
    [{ chartType: 'Heatmap', chartTotals: [-1] }, /chartTotals\[0\] must be a total's name or its index/],
    [{ chartType: 'Heatmap', chartTotals: [true] }, /chartTotals\[0\] must be a total's name or its index/],
    [{ chartType: 'Heatmap', chartTotals: 'Count (Records)' }, /chartTotals must be an array/],
    [{ chartType: 'Heatmap', chartTotals: [] }, /chartTotals must name at least one total/],
    [{ chartType: 'MSColumn2D', chartTotals: [1, 'Median (IMDB Rating)'] }, /chartTotals names a total twice/],
    [{ chartType: 'Scatter', chartTotals: [1] }, /chartType Scatter needs at least 2 totals.*1 given/],
    [{ format: 'html', chartTotals: [0] }, /chartTotals needs chartType/],
  ])('bad chartTotals %j: a 400 naming it', async (extra, message) => {
    expect(await refusal(extra)).toMatch(message);
  });
});

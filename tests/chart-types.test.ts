import fs from 'node:fs';
import path from 'node:path';
import { CHART_TYPE_NAMES } from '@quarry/contract';
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

describe('CROSSTAB.EXECUTE draws every chart type the contract lists (PNG through JSON-RPC)', () => {
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
      index: 'movies',
      query,
      rows: ['Major Genre'],
      // One total: the ratings as columns give the multi-series types several series. Two totals: the
      // two totals are the two series (or the two axes of a Scatter).
      columns: totals === 1 ? [{ field: 'MPAA Rating' }] : [],
      totals: TOTALS[totals],
      chartType: type,
      width,
      height,
    });
    expect(res.error).toBeUndefined();
    const data = res.data!;
    expect(data).toMatchObject({ contentType: 'image/png', width, height, chartType: type });
    const png = Buffer.from(data.data, 'base64');
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    fs.writeFileSync(path.join(OUT, `${type}.png`), png);
    const facts = pngFacts(png, 40);
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
      const facts = pngFacts(Buffer.from(res.data!.data, 'base64'), 20);
      expect(facts.fillColours).toBeGreaterThanOrEqual(type === 'Scatter' ? 1 : 2);
    },
  );

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

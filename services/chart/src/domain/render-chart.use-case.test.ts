import { AppError } from '@quarry/errors';
import type { CrosstabGrid } from '@quarry/contract';
import type { ChartQueue } from '../ports/chart-queue.port';
import type { RenderJob } from '../ports/chart-renderer.port';
import { RenderChartUseCase } from './render-chart.use-case';

/** A queue that keeps the jobs it is handed and answers with a fixed image. */
function recordingQueue(): ChartQueue & { jobs: RenderJob[] } {
  const jobs: RenderJob[] = [];
  return {
    jobs,
    render: (job) => {
      jobs.push(job);
      return Promise.resolve('iVBORw0KGgo=');
    },
    close: () => Promise.resolve(),
  };
}

function grid(totals: string[]): CrosstabGrid {
  const values = (r: number) => totals.map((_, t) => (r + 1) * 10 + t);
  return {
    rowFields: ['genre'],
    columnFields: [],
    totals,
    rows: [['Drama'], ['Comedy'], ['Action']],
    columns: [[]],
    cells: [0, 1, 2].map((r) => [values(r)]),
    rowTotals: [0, 1, 2].map(values),
    columnTotals: [values(9)],
    grandTotals: values(9),
  };
}

const input = (chartType: string, totals: string[]) => ({
  gridJson: JSON.stringify(grid(totals)),
  chartType,
  width: 640,
  height: 480,
  title: 'movies',
  imageFormat: '',
});

describe('RenderChartUseCase takes the number of totals from the grid it is given', () => {
  it.each([['MSCombiDY2D'], ['Scatter'], ['scatter']])('%s with two totals is drawn from both', async (type) => {
    const queue = recordingQueue();
    const out = await new RenderChartUseCase(queue, 1000).render(input(type, ['Sum of Gross', 'Count']), 'r1');
    expect(out).toMatchObject({ pngBase64: 'iVBORw0KGgo=', width: 640, height: 480 });
    expect(out.chartType.toLowerCase()).toBe(type.toLowerCase());
    expect(queue.jobs).toHaveLength(1);
    // Both totals reach the drawing: in the series (combi) or on the two axes (scatter).
    const option = JSON.stringify(queue.jobs[0].option);
    expect(option).toContain('Sum of Gross');
    expect(option).toContain('Count');
  });

  it.each([['MSCombiDY2D'], ['Scatter']])('%s with one total is a 400 naming what the second is for', async (type) => {
    const queue = recordingQueue();
    const err = await new RenderChartUseCase(queue, 1000).render(input(type, ['Count']), 'r1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_ARGUMENT');
    expect((err as AppError).message).toContain(`chartType ${type} needs at least 2 totals`);
    expect((err as AppError).message).toContain('1 given');
    expect(queue.jobs).toHaveLength(0);
  });

  it('a one-total type still draws from one total', async () => {
    const queue = recordingQueue();
    const out = await new RenderChartUseCase(queue, 1000).render(input('Column2D', ['Count']), 'r1');
    expect(out.chartType).toBe('Column2D');
    expect(queue.jobs).toHaveLength(1);
  });
});

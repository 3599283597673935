import { PNG } from 'pngjs';
import { AppError } from '@quarry/errors';
import type { CrosstabGrid } from '@quarry/contract';
import type { ChartQueue } from '../ports/chart-queue.port';
import type { RenderJob } from '../ports/chart-renderer.port';
import { RenderChartUseCase } from './render-chart.use-case';

const pngs = new Map<string, string>();
const pngOf = (width: number, height: number) => {
  const key = `${width}x${height}`;
  if (!pngs.has(key)) pngs.set(key, PNG.sync.write(new PNG({ width, height })).toString('base64'));
  return pngs.get(key)!;
};

/** A queue that keeps the jobs it is handed and answers with a blank PNG of the asked size. */
function recordingQueue(): ChartQueue & { jobs: RenderJob[] } {
  const jobs: RenderJob[] = [];
  return {
    jobs,
    render: (job) => {
      jobs.push(job);
      return Promise.resolve(pngOf(job.width, job.height));
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
    expect(out).toMatchObject({ pngBase64: pngOf(640, 480), width: 640, height: 480 });
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

describe('RenderChartUseCase hands back only an image of the asked format and size', () => {
  const answering = (image: string): ChartQueue => ({ render: () => Promise.resolve(image), close: async () => {} });

  it.each([
    ['other bytes', Buffer.from('forged chart bytes, not an image').toString('base64'), 'no PNG'],
    ['a PNG of another size', pngOf(64, 48), 'a PNG of 64x48 pixels where 640x480 were asked'],
    ['a PNG cut short', pngOf(640, 480).slice(0, 200), 'a PNG cut short'],
  ])('a PNG chart answered with %s is an INTERNAL error saying so', async (_what, image, message) => {
    const err = await new RenderChartUseCase(answering(image), 1000)
      .render(input('Column2D', ['Count']), 'r1')
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INTERNAL' });
    expect((err as AppError).message).toContain(message);
  });

  it('an SVG chart answered with a PNG, or an SVG of another size, is refused', async () => {
    const svg = { ...input('Column2D', ['Count']), imageFormat: 'svg' };
    for (const [image, message] of [
      [pngOf(640, 480), 'does not parse as XML'],
      ['<svg xmlns="http://www.w3.org/2000/svg" width="10" height="480"/>', 'an SVG of 10x480'],
      ['<html xmlns="http://www.w3.org/1999/xhtml" width="640" height="480"/>', 'its root element is <html>'],
    ]) {
      const err = await new RenderChartUseCase(answering(image), 1000).render(svg, 'r1').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'INTERNAL' });
      expect((err as AppError).message).toContain(message);
    }
    const ok = '<?xml version="1.0"?><svg width="640" height="480" xmlns="http://www.w3.org/2000/svg"><rect/></svg>';
    await expect(new RenderChartUseCase(answering(ok), 1000).render(svg, 'r1')).resolves.toMatchObject({ svg: ok });
  });

  it("waits for admission under the caller's key and counts that wait against the one wait bound", async () => {
    const keys: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const admit = async <T>(caller: string, signal: AbortSignal, work: () => Promise<T>) => {
      keys.push(caller);
      await Promise.race([
        held,
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
      ]);
      return work();
    };
    const queue = recordingQueue();
    const err = await new RenderChartUseCase(queue, 50, admit)
      .render(input('Column2D', ['Count']), 'r1', { caller: 'u1' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TIMEOUT' });
    expect(keys).toEqual(['u1']);
    expect(queue.jobs).toHaveLength(0);
    release();
  });
});

describe('imageFormat "echarts" answers the option a worker would draw, without queueing', () => {
  it.each([
    ['Column2D', ['Count']],
    ['Heatmap', ['Count']],
    ['MSCombiDY2D', ['Sum of Gross', 'Count']],
  ])('%s: the same option as the PNG job, as JSON, and no job', async (type, totals) => {
    const queue = recordingQueue();
    const useCase = new RenderChartUseCase(queue, 1000);
    await useCase.render(input(type, totals), 'png');
    const out = await useCase.render({ ...input(type, totals), imageFormat: 'echarts' }, 'echarts');
    expect(queue.jobs).toHaveLength(1);
    expect(out).toMatchObject({ pngBase64: '', svg: '', width: 640, height: 480, chartType: type });
    expect(JSON.parse(out.optionJson)).toEqual(queue.jobs[0].option);
  });

  it('an unknown imageFormat is a 400 listing the three', async () => {
    const err = await new RenderChartUseCase(recordingQueue(), 1000)
      .render({ ...input('Column2D', ['Count']), imageFormat: 'gif' }, 'r1')
      .catch((e: unknown) => e);
    expect((err as AppError).message).toContain('use one of png, svg, echarts');
  });
});

describe('RenderChartUseCase prints PDFs through the same queue', () => {
  const PDF = Buffer.from('%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n').toString('base64');
  const answering = (answer: string): ChartQueue & { jobs: RenderJob[] } => {
    const jobs: RenderJob[] = [];
    return {
      jobs,
      render: (job) => {
        jobs.push(job);
        return Promise.resolve(answer);
      },
      close: () => Promise.resolve(),
    };
  };

  it('a table goes to the queue as a pdf job carrying its HTML and running head', async () => {
    const queue = answering(PDF);
    const table = { html: '<table></table>', title: 'movies', subtitle: 'genre:Drama' };
    await expect(new RenderChartUseCase(queue, 1000).printTable(table, 'r1')).resolves.toBe(PDF);
    expect(queue.jobs).toEqual([expect.objectContaining({ format: 'pdf', table })]);
  });

  it('a chart with imageFormat pdf is queued as pdf and answered in pdfBase64 only', async () => {
    const queue = answering(PDF);
    const out = await new RenderChartUseCase(queue, 1000).render(
      { ...input('Column2D', ['Count']), imageFormat: 'pdf' },
      'r1',
    );
    expect(out).toMatchObject({ pdfBase64: PDF, pngBase64: '', svg: '', optionJson: '' });
    expect(queue.jobs[0]).toMatchObject({ format: 'pdf', width: 640, height: 480 });
  });

  it.each([
    ['a PNG', pngOf(640, 480), /no PDF \(its first bytes are not a PDF header\)/],
    ['a PDF cut short', PDF.slice(0, 24), /a PDF cut short/],
    ['text that is not base64', '%PDF-1.4 nonsense!', /not base64/],
  ])('a worker answering %s is refused, its bytes never returned', async (_what, answer, detail) => {
    const err = await new RenderChartUseCase(answering(answer), 1000)
      .printTable({ html: '', title: '', subtitle: '' }, 'r1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INTERNAL');
    expect((err as AppError).detail).toMatch(detail);
  });
});

import { AppError } from '@quarry/errors';
import { imageFormatProblem, type ImageFormat } from '@quarry/contract';
import type { ChartQueue } from '../ports/chart-queue.port';
import { parseGrid } from './chart-grid';
import { buildChartOption } from './chart-option/build-chart-option';
import { chartKind } from './chart-types';
import { checkPdf, checkPng, checkSvg } from './check-image';
import type { RenderJob, TablePrint } from '../ports/chart-renderer.port';

/**
 * Admits one caller's render: at most so many of one caller's renders in the queue at once, the next
 * slot going round robin over callers (QUARRY_HEAVY_PER_CALLER), so a caller's queue of big charts does
 * not hold back another caller's small one. Rejects as the signal aborts while the render waits.
 */
export type AdmitRender = <T>(caller: string, signal: AbortSignal, work: () => Promise<T>) => Promise<T>;

export interface RenderChartInput {
  gridJson: string;
  chartType: string;
  width: number;
  height: number;
  title: string;
  /** "png" (also when empty), "svg", "pdf" or "echarts". */
  imageFormat: string;
}

export interface RenderedChart {
  /** The PNG, base64-encoded; empty for SVG. */
  pngBase64: string;
  /** The SVG text; empty otherwise. */
  svg: string;
  /** For "echarts": the option the worker would have drawn, as JSON; empty otherwise. */
  optionJson: string;
  /** For "pdf": the chart on one page, base64-encoded; empty otherwise. */
  pdfBase64: string;
  width: number;
  height: number;
  chartType: string;
}

const inRange = (n: number) => Number.isInteger(n) && n >= 100 && n <= 4000;

/** Validates, turns the grid into a chart description, and has a chart worker draw it. */
export class RenderChartUseCase {
  constructor(
    private readonly queue: ChartQueue,
    private readonly waitTimeoutMs: number,
    private readonly admit: AdmitRender = (_caller, _signal, work) => work(),
  ) {}

  /** `caller` keys fair admission (the user's id); `signal` is the call's own deadline. */
  async render(
    input: RenderChartInput,
    requestId: string,
    { caller = '', signal }: { caller?: string; signal?: AbortSignal } = {},
  ): Promise<RenderedChart> {
    const format = input.imageFormat === '' ? 'png' : input.imageFormat;
    // pdf is asked as format "pdf" beside chartType, never as an imageFormat: the contract says so.
    const formatProblem = format === 'pdf' ? undefined : imageFormatProblem(format);
    if (formatProblem) throw AppError.invalid(formatProblem);
    if (!inRange(input.width)) throw AppError.invalid('width must be an integer between 100 and 4000');
    if (!inRange(input.height)) throw AppError.invalid('height must be an integer between 100 and 4000');
    let grid;
    try {
      grid = parseGrid(input.gridJson);
    } catch (err) {
      throw AppError.internal('The crosstab grid is malformed', err);
    }
    // The grid says how many totals were asked: a Scatter or an MSCombiDY2D draws two of them.
    const kind = chartKind(input.chartType, grid.totals.length);
    const option = buildChartOption(grid, kind, input.width, input.height, input.title);
    const drawn = { width: input.width, height: input.height, chartType: kind.name };
    // The very option a worker would be given; a client draws it (nothing is queued).
    if (format === 'echarts')
      return { pngBase64: '', svg: '', optionJson: JSON.stringify(option), pdfBase64: '', ...drawn };
    const job = {
      option,
      width: input.width,
      height: input.height,
      format: format as Exclude<ImageFormat, 'echarts'> | 'pdf',
    };
    const image = await this.queued(job, requestId, caller, signal, 'The chart was not rendered');
    const empty = { pngBase64: '', svg: '', optionJson: '', pdfBase64: '', ...drawn };
    if (format === 'pdf') {
      checkPdf(image);
      return { ...empty, pdfBase64: image };
    }
    if (format === 'svg') {
      checkSvg(image, input.width, input.height);
      return { ...empty, svg: image };
    }
    checkPng(image, input.width, input.height);
    return { ...empty, pngBase64: image };
  }

  /**
   * A crosstab's HTML table printed for paper by a chart worker's Chromium, through the same queue and
   * the same fair admission as a chart: the PDF, base64-encoded.
   */
  async printTable(
    table: TablePrint,
    requestId: string,
    { caller = '', signal }: { caller?: string; signal?: AbortSignal } = {},
  ): Promise<string> {
    // The size fields say nothing for a table (A4 decides); they are a chart's, and the smallest allowed.
    const job = { option: {}, width: 100, height: 100, format: 'pdf' as const, table };
    const pdf = await this.queued(job, requestId, caller, signal, 'The table was not printed');
    checkPdf(pdf);
    return pdf;
  }

  /** One wait bound for the whole call: time spent waiting for admission comes off the queue's. */
  private async queued(
    job: RenderJob,
    requestId: string,
    caller: string,
    signal: AbortSignal | undefined,
    late: string,
  ): Promise<string> {
    const started = Date.now();
    const bound = AbortSignal.timeout(this.waitTimeoutMs);
    const waited = signal ? AbortSignal.any([signal, bound]) : bound;
    try {
      return await this.admit(caller, waited, () =>
        this.queue.render(job, { timeoutMs: Math.max(1, this.waitTimeoutMs - (Date.now() - started)), requestId }),
      );
    } catch (err) {
      if (bound.aborted && !(err instanceof AppError && err.code !== 'TIMEOUT'))
        throw AppError.timeout(`${late} within ${this.waitTimeoutMs} ms`);
      throw err;
    }
  }
}

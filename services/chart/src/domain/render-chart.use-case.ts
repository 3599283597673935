import { AppError } from '@quarry/errors';
import { imageFormatProblem, type ImageFormat } from '@quarry/contract';
import type { ChartQueue } from '../ports/chart-queue.port';
import { parseGrid } from './chart-grid';
import { buildChartOption } from './chart-option/build-chart-option';
import { chartKind } from './chart-types';

export interface RenderChartInput {
  gridJson: string;
  chartType: string;
  width: number;
  height: number;
  title: string;
  /** "png" (also when empty) or "svg". */
  imageFormat: string;
}

export interface RenderedChart {
  /** The PNG, base64-encoded; empty for SVG. */
  pngBase64: string;
  /** The SVG text; empty for PNG. */
  svg: string;
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
  ) {}

  async render(input: RenderChartInput, requestId: string): Promise<RenderedChart> {
    const format = input.imageFormat === '' ? 'png' : input.imageFormat;
    const formatProblem = imageFormatProblem(format);
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
    const image = await this.queue.render(
      { option, width: input.width, height: input.height, format: format as ImageFormat },
      { timeoutMs: this.waitTimeoutMs, requestId },
    );
    const svg = format === 'svg';
    return {
      pngBase64: svg ? '' : image,
      svg: svg ? image : '',
      width: input.width,
      height: input.height,
      chartType: kind.name,
    };
  }
}

import type { RenderJob } from '../ports/chart-renderer.port';
import { renderSvg } from './echarts-svg-renderer.adapter';

/** Runs in a pool thread (piscina): ECharts draws the SVG there, off the chart worker's event loop. */
export default function drawSvg(job: RenderJob): string {
  return renderSvg(job);
}

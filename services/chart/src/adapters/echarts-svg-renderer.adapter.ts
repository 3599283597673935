import { reviveChartOption } from '@quarry/client';
import { upgradeLegacyFormatters } from '../domain/formatters';
import { compactNumber, textWidth } from '../domain/text-metrics';
import type { RenderJob } from '../ports/chart-renderer.port';

// echarts ships ESM types ("type": "module") but CommonJS builds; this service compiles to CommonJS, so it
// loads one and borrows the types. The production build (the one the Chromium page runs too): the
// development build prints a warning per crowded axis ("The ticks may be not readable") on every render.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const echarts = require('echarts/dist/echarts.min.js') as typeof import('echarts', {
  with: { 'resolution-mode': 'import' },
});

// Without a canvas ECharts guesses text widths from Helvetica-like figures, narrower than DejaVu Sans
// (the font the option names), so a viewer would draw legend entries into each other. It measures with
// the same per-character widths the option was planned with instead; they never under-measure.
echarts.setPlatformAPI({
  measureText(text: string, font?: string) {
    const size = Number(/(\d+(?:\.\d+)?)px/.exec(font ?? '')?.[1] ?? 12);
    return { width: textWidth(text, size) };
  },
});

/**
 * ECharts' server-side SVG renderer (echarts 5.3+): no browser, no canvas, the same option as the PNG.
 * Text is written as SVG <text> with its font, so the viewer draws it at full resolution.
 */
export function renderSvg(job: RenderJob): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: job.width, height: job.height });
  try {
    chart.setOption(
      reviveChartOption(upgradeLegacyFormatters(structuredClone(job.option)), { compact: compactNumber }),
    );
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

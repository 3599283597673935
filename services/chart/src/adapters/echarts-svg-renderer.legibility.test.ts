import { AppError } from '@quarry/errors';
import { chartTotalsProblem } from '@quarry/contract';
import { trickyGrids } from '../../test-support/chart-grids.fixtures';
import { buildChartOption } from '../domain/chart-option/build-chart-option';
import { CHART_KINDS, type ChartKind } from '../domain/chart-types';
import type { ChartGrid } from '../domain/chart-grid';
import { bounds, overlap, textBoxes } from '../../test-support/svg-layout.fixtures';
import { renderSvg } from './echarts-svg-renderer.adapter';

/*
 * Every chart type at sizes from 100×100 to 4000×4000 over real data that broke the first charts (money
 * in billions, 57 states, long distributor names, negative delays, one category), drawn with ECharts'
 * SSR SVG renderer and read back as text boxes: nothing outside the image, no two texts over each other,
 * no paged legend, every series (or slice) named in full, else a 400 that names the limit.
 */

const SIZES: Array<[number, number]> = [
  [100, 100],
  [300, 200],
  [800, 600],
  [1600, 1000],
  [4000, 4000],
];
const MARGIN = 2;
const grids = trickyGrids();
const PIE_LIKE = new Set(['pie', 'doughnut', 'funnel', 'pyramid']);

/** The names a reader must find in full: series in a legend, or slices (gathered ones counted by Other). */
function mustName(grid: ChartGrid, kind: ChartKind): string[] {
  if (PIE_LIKE.has(kind.family))
    return grid.rows
      .map((r, i) => ({ name: r.join(' / '), v: grid.rowTotals[i][0] }))
      .filter((d) => typeof d.v === 'number' && d.v > 0)
      .map((d) => d.name);
  // One series is named by the title; a legend appears from two on.
  if (!kind.multiSeries || kind.family === 'waterfall') return [];
  if (grid.columnFields.length === 0) return grid.totals.length > 1 ? grid.totals : [];
  return grid.columns.map((c) => c.join(' / '));
}

function check(grid: ChartGrid, kind: ChartKind, width: number, height: number): string[] {
  // More totals than the type draws never reach the builder: the API refuses them (chartTotals).
  if (chartTotalsProblem(kind.name, grid.totals.length)) return [];
  let option: Record<string, unknown>;
  try {
    option = buildChartOption(grid, kind, width, height, 'movies');
  } catch (err) {
    if (
      err instanceof AppError &&
      err.code === 'INVALID_ARGUMENT' &&
      /can draw at most \d+ .* legibly; this crosstab has \d+\. Use (rowLimit|columnLimit): \d+|is too small to draw any .* legibly|draws parts of a whole: positive values only/.test(
        err.message,
      )
    )
      return [];
    if (err instanceof AppError && /needs at least 2 totals/.test(err.message) && grid.totals.length < 2) return [];
    throw err;
  }
  const svg = renderSvg({ option, width, height });
  expect(svg).toMatch(new RegExp(`^<svg[^>]* width="${width}" height="${height}"`));
  const boxes = textBoxes(svg);
  const problems: string[] = [];
  for (const b of boxes) {
    const r = bounds(b);
    if (r.left < MARGIN || r.top < MARGIN || r.right > width - MARGIN || r.bottom > height - MARGIN)
      problems.push(
        `"${b.text}" runs off the image (${Math.round(r.left)},${Math.round(r.top)})-(${Math.round(r.right)},${Math.round(r.bottom)})`,
      );
    if (/^\d+\/\d+$/.test(b.text)) problems.push(`a paged legend ("${b.text}")`);
  }
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      if (overlap(boxes[i], boxes[j])) problems.push(`"${boxes[i].text}" overlaps "${boxes[j].text}"`);
    }
  }
  const texts = new Set(boxes.map((b) => b.text));
  const names = mustName(grid, kind);
  const missing = names.filter((n) => !texts.has(n));
  const other = [...texts].map((t) => /^Other \((\d+) under/.exec(t)).find(Boolean);
  if (missing.length && !(other && Number(other[1]) === missing.length))
    problems.push(
      `not named in full: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`,
    );
  return problems;
}

describe('every chart type, every size, tricky data: legible as a still image (SVG text boxes)', () => {
  it.each(CHART_KINDS.map((k) => [k.name, k] as const))('%s', (_name, kind) => {
    const problems: string[] = [];
    for (const [gname, grid] of Object.entries(grids)) {
      for (const [w, h] of SIZES) problems.push(...check(grid, kind, w, h).map((p) => `${gname} ${w}×${h}: ${p}`));
    }
    expect(problems).toEqual([]);
  });

  it('a large chart of moderate data is drawn, not refused', () => {
    for (const kind of CHART_KINDS) {
      for (const [gname, grid] of Object.entries(grids)) {
        if (grid.totals.length < kind.minMeasures) continue;
        if (gname === 'states' && (kind.family === 'radar' || kind.family === 'heatmap')) continue;
        // Every Min(delay) is negative: parts of a whole cannot be drawn from them (a 400 says so).
        if (gname === 'delays' && (PIE_LIKE.has(kind.family) || kind.family === 'treemap')) continue;
        expect(() => buildChartOption(grid, kind, 1600, 1000, 'movies')).not.toThrow();
      }
    }
  });
});

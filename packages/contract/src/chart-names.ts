import { quoteInput } from '@quarry/errors';

/*
 * The chart vocabulary of CROSSTAB.EXECUTE, shared by the gateway (which refuses a bad name before any
 * crosstab runs) and the chart service (which draws them). FusionCharts names; 3D names are drawn flat.
 */

export interface ChartTypeName {
  /** The FusionCharts name as documented (matched case-insensitively). */
  name: string;
  /** Totals (measures) the type needs: a Scatter plots two of them against each other. */
  minMeasures: number;
  /**
   * Totals the type can draw legibly: one for a single series, a heatmap's colour or a slice's size; two
   * where a second total gets its own value axis. More is refused rather than dropped from the image.
   */
  maxMeasures: number;
  /** What the measures are used for, for the 400 when too few are given. */
  measuresUse?: string;
}

const t = (name: string, minMeasures = 1, measuresUse?: string): ChartTypeName => ({
  name,
  minMeasures,
  maxMeasures: /^(MS|Stacked)|^Scatter$/.test(name) ? 2 : minMeasures,
  measuresUse,
});

export const CHART_TYPE_NAMES: readonly ChartTypeName[] = [
  t('Column2D'),
  t('Column3D'),
  t('MSColumn2D'),
  t('MSColumn3D'),
  t('StackedColumn2D'),
  t('StackedColumn3D'),
  t('Bar2D'),
  t('Bar3D'),
  t('MSBar2D'),
  t('MSBar3D'),
  t('StackedBar2D'),
  t('StackedBar3D'),
  t('Line'),
  t('MSLine'),
  t('Spline'),
  t('MSSpline'),
  t('Area2D'),
  t('MSArea'),
  t('StackedArea2D'),
  t('SplineArea'),
  t('Pie2D'),
  t('Pie3D'),
  t('Doughnut2D'),
  t('Doughnut3D'),
  t('Funnel'),
  t('Pyramid'),
  t('Pareto2D'),
  t('Pareto3D'),
  t('Waterfall2D'),
  t('MSCombi2D'),
  t('MSCombiDY2D', 2, 'the first as columns on the left axis, the second as a line on the right axis'),
  t('Radar'),
  t('Heatmap'),
  t('Treemap'),
  t('Scatter', 2, 'the first as x, the second as y'),
];

/** png and svg are images; echarts is the ECharts option the images are drawn from, as JSON. */
export const IMAGE_FORMATS = ['png', 'svg', 'echarts'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** The canonical entry for a name given in any case, or undefined. */
export function findChartType(name: string): ChartTypeName | undefined {
  const key = name.trim().toLowerCase();
  return CHART_TYPE_NAMES.find((c) => c.name.toLowerCase() === key);
}

/**
 * Why this chart cannot be drawn from its name and totals alone, or undefined: the same words from the
 * gateway (before the crosstab runs) and from the chart service.
 */
export function chartTypeProblem(name: string, measures: number): string | undefined {
  const hit = findChartType(name);
  if (!hit)
    return `chartType ${quoteInput(name)} is not supported; use one of ${CHART_TYPE_NAMES.map((c) => c.name).join(', ')}`;
  if (measures >= hit.minMeasures) return undefined;
  const use = hit.measuresUse ? ` (${hit.measuresUse})` : '';
  return `chartType ${hit.name} needs at least ${hit.minMeasures} totals${use}; ${measures} given`;
}

/**
 * Why this chart cannot draw so many totals, or undefined: said of chartTotals, the parameter that picks
 * the ones drawn (every total when it is absent).
 */
export function chartTotalsProblem(name: string, drawn: number): string | undefined {
  const hit = findChartType(name);
  if (!hit || drawn <= hit.maxMeasures) return undefined;
  const what = hit.maxMeasures === 1 ? '1 total' : `${hit.maxMeasures} totals (the second on its own axis)`;
  return `chartType ${hit.name} draws at most ${what}; ${drawn} would be drawn: name the ones to draw in chartTotals`;
}

export function imageFormatProblem(format: string): string | undefined {
  return (IMAGE_FORMATS as readonly string[]).includes(format)
    ? undefined
    : `imageFormat ${quoteInput(format)} is not supported; use one of ${IMAGE_FORMATS.join(', ')}`;
}

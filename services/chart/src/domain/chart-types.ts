import { AppError } from '@quarry/errors';
import { CHART_TYPE_NAMES, chartTotalsProblem, chartTypeProblem, findChartType } from '@quarry/contract';

export type ChartFamily =
  | 'column'
  | 'bar'
  | 'line'
  | 'area'
  | 'pie'
  | 'doughnut'
  | 'funnel'
  | 'pyramid'
  | 'pareto'
  | 'waterfall'
  | 'combi'
  | 'combiDY'
  | 'radar'
  | 'heatmap'
  | 'treemap'
  | 'scatter';

export interface ChartKind {
  /** The FusionCharts name as documented. */
  name: string;
  family: ChartFamily;
  multiSeries: boolean;
  stacked: boolean;
  /** Spline types: the same line, smoothed. */
  smooth: boolean;
  minMeasures: number;
}

interface Shape {
  family: ChartFamily;
  multiSeries?: boolean;
  stacked?: boolean;
  smooth?: boolean;
}

/** How each FusionCharts name is drawn with ECharts (3D names are drawn flat). */
const SHAPES: Record<string, Shape> = {
  Column2D: { family: 'column' },
  Column3D: { family: 'column' },
  MSColumn2D: { family: 'column', multiSeries: true },
  MSColumn3D: { family: 'column', multiSeries: true },
  StackedColumn2D: { family: 'column', multiSeries: true, stacked: true },
  StackedColumn3D: { family: 'column', multiSeries: true, stacked: true },
  Bar2D: { family: 'bar' },
  Bar3D: { family: 'bar' },
  MSBar2D: { family: 'bar', multiSeries: true },
  MSBar3D: { family: 'bar', multiSeries: true },
  StackedBar2D: { family: 'bar', multiSeries: true, stacked: true },
  StackedBar3D: { family: 'bar', multiSeries: true, stacked: true },
  Line: { family: 'line' },
  MSLine: { family: 'line', multiSeries: true },
  Spline: { family: 'line', smooth: true },
  MSSpline: { family: 'line', multiSeries: true, smooth: true },
  Area2D: { family: 'area' },
  MSArea: { family: 'area', multiSeries: true },
  StackedArea2D: { family: 'area', multiSeries: true, stacked: true },
  SplineArea: { family: 'area', smooth: true },
  Pie2D: { family: 'pie' },
  Pie3D: { family: 'pie' },
  Doughnut2D: { family: 'doughnut' },
  Doughnut3D: { family: 'doughnut' },
  Funnel: { family: 'funnel' },
  Pyramid: { family: 'pyramid' },
  Pareto2D: { family: 'pareto' },
  Pareto3D: { family: 'pareto' },
  Waterfall2D: { family: 'waterfall' },
  MSCombi2D: { family: 'combi', multiSeries: true },
  MSCombiDY2D: { family: 'combiDY', multiSeries: true },
  Radar: { family: 'radar', multiSeries: true },
  Heatmap: { family: 'heatmap' },
  Treemap: { family: 'treemap' },
  Scatter: { family: 'scatter' },
};

export const CHART_KINDS: readonly ChartKind[] = CHART_TYPE_NAMES.map((c) => {
  const shape = SHAPES[c.name];
  if (!shape) throw new Error(`chart type ${c.name} has no drawing`);
  return {
    name: c.name,
    family: shape.family,
    multiSeries: shape.multiSeries ?? false,
    stacked: shape.stacked ?? false,
    smooth: shape.smooth ?? false,
    minMeasures: c.minMeasures,
  };
});

/** The kind for a name and the number of totals it is given, or a 400 (unknown name, or fewer or more totals than it draws). */
export function chartKind(name: string, measures: number): ChartKind {
  const problem = chartTypeProblem(name, measures) ?? chartTotalsProblem(name, measures);
  if (problem) throw AppError.invalid(problem);
  const hit = findChartType(name);
  const kind = hit && CHART_KINDS.find((k) => k.name === hit.name);
  if (!kind) throw AppError.invalid(`chartType ${name} has no drawing`);
  return kind;
}

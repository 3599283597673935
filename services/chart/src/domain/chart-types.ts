import { AppError } from '@quarry/errors';

export type ChartFamily = 'column' | 'bar' | 'line' | 'area' | 'pie' | 'doughnut';

export interface ChartKind {
  /** The FusionCharts name as documented. */
  name: string;
  family: ChartFamily;
  multiSeries: boolean;
  stacked: boolean;
}

const kind = (name: string, family: ChartFamily, multiSeries = false, stacked = false): ChartKind => ({ name, family, multiSeries, stacked });

/** FusionCharts type names and their ECharts equivalents (3D names are drawn flat). */
export const CHART_KINDS: readonly ChartKind[] = [
  kind('Column2D', 'column'),
  kind('Column3D', 'column'),
  kind('MSColumn2D', 'column', true),
  kind('MSColumn3D', 'column', true),
  kind('StackedColumn2D', 'column', true, true),
  kind('StackedColumn3D', 'column', true, true),
  kind('Bar2D', 'bar'),
  kind('Bar3D', 'bar'),
  kind('MSBar2D', 'bar', true),
  kind('MSBar3D', 'bar', true),
  kind('StackedBar2D', 'bar', true, true),
  kind('StackedBar3D', 'bar', true, true),
  kind('Line', 'line'),
  kind('MSLine', 'line', true),
  kind('Area2D', 'area'),
  kind('MSArea', 'area', true),
  kind('StackedArea2D', 'area', true, true),
  kind('Pie2D', 'pie'),
  kind('Pie3D', 'pie'),
  kind('Doughnut2D', 'doughnut'),
  kind('Doughnut3D', 'doughnut'),
];

export function chartKind(name: string): ChartKind {
  const hit = CHART_KINDS.find((k) => k.name.toLowerCase() === name.trim().toLowerCase());
  if (!hit) throw AppError.invalid(`chartType "${name}" is not supported; use one of ${CHART_KINDS.map((k) => k.name).join(', ')}`);
  return hit;
}
